set -u
export LD_LIBRARY_PATH=$PWD/build/devlibs:/usr/local/cuda/lib64
for shape in "151936 4096" "128256 8192"; do
  timeout 200 bash scripts/ncu_compare.sh 256 $shape 1 "bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 re;bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 c2 re" 2>/dev/null | tail -2
done
FUSEDSAMPLE_CACHE_DIR=/tmp/cc ./build/fusedsample_bench --fs_rows=256 --fs_reps=20 --fs_specs="bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 re;bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 c2 re" 2>&1 | grep -E "^\| (128256|151936) "
