#!/usr/bin/env bash
# gpu_session.sh: what one device-machine call runs. Uses the carried build/
# (built on the CPU machine) and falls back to building in place if those
# binaries cannot run there. Logs and tables go to $OUT.
#   scripts/gpu_session.sh tests        GPU tests only
#   scripts/gpu_session.sh bench [ARGS] benchmark (ARGS go to fusedsample_bench), then goal_check.py on its table
#   scripts/gpu_session.sh all          both
#   scripts/gpu_session.sh tune [ARGS]  fusedsample tune (ARGS go to it); tuning.json exported to $OUT
#   scripts/gpu_session.sh overhead [ARGS] host overhead of the JIT path (fusedsample_overhead)
set -uo pipefail
OUT=${OUT:-/tmp/fs-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/build/devlibs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
what=${1:-all}; shift || true
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
if ! ./build/tests/fusedsample_gpu_tests --gtest_list_tests >/dev/null 2>"$OUT/ldd_err.txt"; then
  echo "carried binaries do not run here:"; cat "$OUT/ldd_err.txt"; ldd ./build/tests/fusedsample_gpu_tests | grep "not found"
  exit 3
fi
./build/fusedsample info 2>&1 | tee "$OUT/info.txt"
rc=0
if [[ $what == tests || $what == all ]]; then
  ./build/tests/fusedsample_gpu_tests --gtest_brief=0 "$@" 2>&1 | tee "$OUT/gpu_tests.txt" | grep -vE "^\[ +(RUN|OK) +\]" | tail -n 60
  rc=${PIPESTATUS[0]}
fi
if [[ $what == bench || $what == all ]]; then
  ./build/fusedsample_bench --fs_table="$OUT/bench_table.md" --benchmark_out="$OUT/bench.json" --benchmark_out_format=json \
    --benchmark_counters_tabular=true "$@" 2>&1 | tee "$OUT/bench.txt" | tail -n 40
  rc=$(( rc | PIPESTATUS[0] ))
  # Issue #3's goals against this run's table (a miss is reported, not an error of the session).
  python3 scripts/goal_check.py "$OUT/bench_table.md" | tee "$OUT/goals.md" || true
fi
if [[ $what == tune ]]; then
  ./build/fusedsample tune "$@" 2> >(tee "$OUT/tune_progress.txt" >&2) | tee "$OUT/tune_table.md"
  rc=$(( rc | PIPESTATUS[0] ))
  ./build/fusedsample export -o "$OUT/tuning.json"
fi
if [[ $what == overhead ]]; then
  ./build/fusedsample_overhead "$@" 2>&1 | tee "$OUT/overhead.md"
  rc=$(( rc | PIPESTATUS[0] ))
fi
exit $rc
