#!/usr/bin/env bash
# ab_bench_builds.sh: several fusedsample_bench builds (copies in build/, e.g.
# build/bench_A made from one template state, build/bench_B from another:
# the templates are embedded at build time) timed in one device call, in the
# order given (A B B A: drift under the power cap shows as a difference
# between the two runs of one build). Each build gets its own kernel cache
# directory. Prints the compare/ lines (N, fused, floor, cuBLAS, unfused µs,
# x floor, x cuBLAS, x unfused, GB/s) of both bench shapes.
#   scripts/ab_bench_builds.sh bench_A bench_B bench_B bench_A   (ROWS=128,256 REPS=20 by default)
# For cycles rather than µs (one launch at a time, no power-cap drift), use
# BENCH=build/bench_A scripts/ncu_cublas.sh 256 V d 3 fused.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/build/devlibs:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for X in "$@"; do
  echo "== $X"
  FUSEDSAMPLE_CACHE_DIR=/tmp/c_$X timeout 280 ./build/$X --fs_rows=${ROWS:-128,256} --fs_reps=${REPS:-20} \
    --benchmark_filter='^(floor|compare)/' 2>&1 | grep -E "^\| [0-9]+ \||rror"
done
