set -uo pipefail
export LD_LIBRARY_PATH=$PWD/build/devlibs:/usr/local/cuda/lib64
export FUSEDSAMPLE_CACHE_DIR=/tmp/fscache-$1
nvidia-smi --query-gpu=name,clocks.sm --format=csv
S="bf16 sm_90a wgmma_coop tv128 tn128 td64 s4 w20x1;bf16 sm_90a wgmma_coop tv128 tn128 td64 s4 w20x1 c2;bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w16x1 l2;bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w16x1 c2 l2;bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 c2 l2;bf16 sm_90a wgmma_coop tv128 tn256 td64 s4 w16x1 c2 l2;bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w16x1 c4 l2"
for bin in build/mainloop/fusedsample_bench build/fusedsample_bench; do
  echo "=== $bin"
  timeout 280 $bin --fs_shapes=151936,4096,128256,8192 --fs_rows=128,256 --fs_reps=10 --fs_temperature=1 --benchmark_filter='^(floor|compare)/' --fs_specs="$S" 2>&1 | grep -E "^\||rror|left out" 
done
