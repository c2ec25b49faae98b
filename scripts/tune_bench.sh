#!/usr/bin/env bash
# tune_bench.sh: one device-machine call that produces a BENCHMARKS.md table
# set: tune both LM-head shapes on an empty cache, export the tuned configs,
# run the benchmark with them, and take the ncu summaries (achieved DRAM
# bandwidth at N = 1, tensor-pipe activity at N = 256). Six files go to $OUT
# (the device tool brings back only a few per call).
#   [TUNE_ARGS="--max-candidates 96"] [NCU=0] [AB_ROWS=128,256 AB_SPECS="spec;spec"] \
#     scripts/tune_bench.sh [extra fusedsample_bench args]
# NCU=0 skips the ncu summaries; AB_SPECS adds a second benchmark call at
# AB_ROWS with those forced configs as more lines beside the tuned one
# (e.g. the built-in table's winners: a same-call A/B of old and new tables).
set -uo pipefail
OUT=${OUT:-/tmp/fs-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/build/devlibs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export FUSEDSAMPLE_CACHE_DIR=$(mktemp -d /tmp/fs-cache.XXXXXX)
fs=./build/fusedsample
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.mem,power.limit --format=csv
for shape in "151936 4096" "128256 8192"; do
  set -- $shape
  $fs tune --vocab "$1" --hidden "$2" --dtype bf16 --batches 1-256 ${TUNE_ARGS:-} 2>/tmp/tune_progress_$1.txt >"$OUT/tune_$1.md"
  tail -n 3 /tmp/tune_progress_$1.txt
done
$fs export -o "$OUT/tuning.json"
shift $#
./build/fusedsample_bench --fs_reps=20 --fs_table="$OUT/bench_table.md" "$@" >"$OUT/bench.txt" 2>&1
grep "^|" "$OUT/bench_table.md"
if [[ -n ${AB_SPECS:-} ]]; then
  ./build/fusedsample_bench --fs_reps=20 --fs_rows="${AB_ROWS:-128,256}" --fs_specs="$AB_SPECS" \
    --fs_table="$OUT/bench_ab_table.md" >"$OUT/bench_ab.txt" 2>&1
  grep "^|" "$OUT/bench_ab_table.md"
fi
[[ ${NCU:-1} == 0 ]] && exit 0
for shape in "151936 4096" "128256 8192"; do
  set -- $shape
  for n in 1 256; do
    echo "== ncu N=$n V=$1 d=$2 (tuned config)"
    scripts/ncu_summary.sh "$n" "$1" "$2"
  done
done 2>&1 | tee "$OUT/ncu.txt"
