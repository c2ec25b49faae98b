#!/usr/bin/env bash
# power_probe.sh: SM clock and board power while one line of the benchmark
# runs back to back for about a second (--fs_order=sequential), for several
# (line, N) pairs, from a 20 ms nvidia-smi log. Tests whether a line runs
# into the board's power limit (clock below the maximum at ~ the limit).
#   scripts/power_probe.sh V d REPS "line:N line:N ..."   (line: floor, cublas, unfused, fused)
# Prints: line, N, median µs (the benchmark's), and the SM clock and power the
# run settles at (means over its last quarter). power.draw is a moving average
# over about a second, so the instantaneous reading (power.draw.instant) is
# logged where the driver has it. Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/fs-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/build/devlibs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
v=$1; d=$2; reps=$3; pairs=$4
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
power=power.draw
nvidia-smi --help-query-gpu | grep -q '"power.draw.instant"' && power=power.draw.instant
echo "power field: $power"
nvidia-smi --query-gpu=timestamp,clocks.sm,$power --format=csv,noheader,nounits -lms 20 >"$OUT/power_log.csv" &
smi=$!
sleep 1
: >"$OUT/windows.txt"
for pair in $pairs; do
  line=${pair%%:*}; n=${pair##*:}
  filter="^$line/V${v}_d$d/N$n/"; [[ $line == floor ]] && filter="^floor/V${v}_d$d"
  # one untimed run first compiles the kernels, so the timed window holds only launches
  ./build/fusedsample_bench --fs_order=sequential --fs_shapes=$v,$d --fs_rows=$n --fs_reps=3 \
    --benchmark_filter="$filter" >/dev/null 2>&1
  t0=$(date +%s.%N)
  us=$(./build/fusedsample_bench --fs_order=sequential --fs_shapes=$v,$d --fs_rows=$n --fs_reps=$reps \
        --benchmark_filter="$filter" 2>/dev/null | grep -oE "us=[0-9.]+k?" | head -1)
  t1=$(date +%s.%N)
  echo "$line $n $t0 $t1 $us" >>"$OUT/windows.txt"
done
sleep 0.2
kill $smi
python3 - "$OUT/power_log.csv" "$OUT/windows.txt" <<'PY'
import sys, datetime
rows = []
for l in open(sys.argv[1]):
    p = [x.strip() for x in l.split(',')]
    try:
        t = datetime.datetime.strptime(p[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        rows.append((t, float(p[1]), float(p[2])))
    except (ValueError, IndexError):
        pass
print("| line | N | µs (median) | SM MHz (last quarter) | board W (last quarter) | samples |")
print("|---|---:|---:|---:|---:|---:|")
for l in open(sys.argv[2]):
    line, n, t0, t1, us = (l.split() + [""])[:5]
    a = float(t0) + (float(t1) - float(t0)) * 0.75
    s = [r for r in rows if a <= r[0] <= float(t1)]
    if s:
        print(f"| {line} | {n} | {us[3:]} | {sum(r[1] for r in s)/len(s):.0f} | {sum(r[2] for r in s)/len(s):.0f} | {len(s)} |")
PY
