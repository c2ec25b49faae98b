#!/usr/bin/env bash
export LD_LIBRARY_PATH=$PWD/build/devlibs:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv
timeout 330 ./build/tests/fusedsample_gpu_tests --gtest_brief=1 "$TESTF" 2>&1 | tail -n 40
SPECS="bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 re;bf16 sm_90a wgmma_coop tv128 tn128 td64 s4 w12x1 re;bf16 sm_90a wgmma_coop tv128 tn128 td64 s5 w12x1 re"
./build/fusedsample_bench --fs_shapes=151936,4096,128256,8192 --fs_rows=64,128,256 --fs_reps=10 --fs_temperature=1 \
    --benchmark_filter='^(floor|compare)/' --fs_specs="$SPECS" --fs_table=$OUT/table.md 2>&1 | grep -v "^-" | tail -n 3
cat $OUT/table.md
