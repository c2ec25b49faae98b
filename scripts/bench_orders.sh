#!/usr/bin/env bash
# bench_orders.sh: the benchmark under each call order of the four lines
# (autotune/call_order.hpp), one after the other in one device call, with the
# GPU's power limit and a 20 ms log of SM clock and power draw.
#   scripts/bench_orders.sh [ARGS]   ARGS go to every fusedsample_bench run
# Writes $OUT/order-{balanced,rotating,sequential}.md (tables; balanced with
# --fs_by_predecessor), $OUT/power.csv and $OUT/order-windows.txt (each run's
# start and end, seconds since the epoch, to place it in the power log).
set -uo pipefail
OUT=${OUT:-/tmp/fs-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/build/devlibs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,power.limit,power.max_limit,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader -lms 20 >"$OUT/power.csv" &
: >"$OUT/order-windows.txt"
smi=$!
rc=0
for order in balanced rotating sequential; do
  extra=()
  [[ $order == balanced ]] && extra=(--fs_by_predecessor)
  echo "== --fs_order=$order $*"
  t0=$(date +%s.%N)
  ./build/fusedsample_bench --fs_order=$order "${extra[@]}" --fs_table="$OUT/order-$order.md" "$@" >"$OUT/order-$order.txt" 2>&1
  rc=$(( rc | $? ))
  echo "$order $t0 $(date +%s.%N)" >>"$OUT/order-windows.txt"
  tail -n 60 "$OUT/order-$order.md"
done
kill $smi
exit $rc
