export LD_LIBRARY_PATH=$PWD/build/devlibs:/usr/local/cuda/lib64
C="bf16 sm_90a wgmma_coop"
sw() { rows=$1; shift; local IFS=';'; timeout 150 ./build/fusedsample_bench --fs_shapes=${SHAPE:-151936,4096} --fs_reps=10 --benchmark_filter='^(floor|sweep)/' --fs_rows=$rows --fs_specs="$*" 2>&1 | grep -E "^\| 1|rror"; }
