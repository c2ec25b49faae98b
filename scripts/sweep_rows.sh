#!/usr/bin/env bash
# sweep_rows.sh: the record's command (fusedsample_bench, balanced interleaved order, built-in tables) at every
# batch N from 1 to 256, not only the powers of two, on both shapes; then scripts/goal_check.py over all of it
# (issue #3's goals say "N <= 64" and "no N in 1..256"). Runs in four chunks (each shape, N = 1-128 and
# 129-256), so that a chunk that runs out of time leaves the others. About 2 minutes on an H200 at 20 reps.
#   scripts/sweep_rows.sh [REPS] [CHUNK_TIMEOUT_S]   (defaults 20 and 140; tables and logs go to $OUT)
# Session 57 ran it first (BENCHMARKS.md): goal 3 held at every N, goal 1 did not at N = 51-64.
set -uo pipefail
OUT=${OUT:-/tmp/fs-sweep}
reps=${1:-20}; limit=${2:-140}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/build/devlibs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.limit --format=csv | tee "$OUT/gpu.txt"
t0=$(date +%s)
lo=$(seq -s, 1 128); hi=$(seq -s, 129 256)
for chunk in "151936,4096 lo" "128256,8192 lo" "151936,4096 hi" "128256,8192 hi"; do
  read -r shape part <<<"$chunk"
  rows=$lo; [[ $part == hi ]] && rows=$hi
  tag="${shape%%,*}-$part"
  timeout "$limit" ./build/fusedsample_bench --fs_reps="$reps" --fs_shapes="$shape" --fs_rows="$rows" \
    --fs_table="$OUT/table-$tag.md" > "$OUT/bench-$tag.txt" 2>&1
  echo "chunk $tag rc=$? $(( $(date +%s) - t0 )) s" | tee -a "$OUT/gpu.txt"
done
# The bench's stdout holds each chunk's table too (its --fs_table file is written only when the chunk finishes).
python3 scripts/goal_check.py "$OUT"/bench-*.txt | tee "$OUT/goals.md"
