#!/usr/bin/env bash
# tune_demo.sh: the autotuning acceptance run on the GPU machine (issue 4).
# 1. a full tune of one shape over buckets 1..256 on an EMPTY cache, timed;
# 2. export; wipe the tuning database; import; the sampler (fusedsample demo)
#    then runs the imported config, loading its module from the disk cache;
# 3. the same after wiping the whole cache (modules too): the imported config
#    is used, and its module is compiled once on first use.
# Writes logs to $OUT. Usage: scripts/tune_demo.sh [V D]
set -uo pipefail
OUT=${OUT:-/tmp/fs-out}
V=${1:-151936}
D=${2:-4096}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/build/devlibs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export FUSEDSAMPLE_CACHE_DIR=$(mktemp -d /tmp/fs-cache.XXXXXX)
fs=./build/fusedsample
echo "== tune V=$V d=$D on an empty cache ($FUSEDSAMPLE_CACHE_DIR)"
t0=$(date +%s%N)
$fs tune --vocab "$V" --hidden "$D" --dtype bf16 --batches 1-256 --budget 0 2>"$OUT/tune_progress_$V.txt" | tee "$OUT/tune_table_$V.md"
t1=$(date +%s%N)
echo "tune wall time: $(( (t1 - t0) / 1000000 )) ms (process start to exit, compile included)" | tee -a "$OUT/tune_table_$V.md"
$fs export -o "$OUT/tuning_$V.json"
echo "== wipe tuning.json only, import, demo N=64"
rm -f "$FUSEDSAMPLE_CACHE_DIR/tuning.json"
$fs info | grep -iE "cache|tuned|module"
$fs import "$OUT/tuning_$V.json"
$fs info | grep -iE "cache|tuned|module" | head -20
$fs demo --vocab "$V" --hidden "$D" --rows 64 --check-rows 2 | grep -E "kernel:|check:|timing:"
echo "== wipe the whole cache (modules too), import, demo N=64"
rm -rf "$FUSEDSAMPLE_CACHE_DIR"; mkdir -p "$FUSEDSAMPLE_CACHE_DIR"
$fs import "$OUT/tuning_$V.json"
$fs demo --vocab "$V" --hidden "$D" --rows 64 --check-rows 2 | grep -E "kernel:|check:|timing:"
$fs demo --vocab "$V" --hidden "$D" --rows 64 --check-rows 2 | grep -E "kernel:|check:|timing:"
