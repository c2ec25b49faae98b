#!/usr/bin/env bash
# power_probe.sh: SM clock and board power while one line of the benchmark
# runs back to back for about a second (--fs_order=sequential), for several
# (line, N) pairs, from a 20 ms nvidia-smi log. Tests whether a line runs
# into the board's power limit (clock below the maximum at ~ the limit).
#   scripts/power_probe.sh V d REPS "line:N line:N ..."   (line: floor, cublas, unfused, fused)
#   (BENCH=path runs another build of fusedsample_bench, e.g. an experiment copy)
# Prints: line, N, median µs (the benchmark's), and the SM clock and power the
# run settles at (means over its last quarter), the energy per call (µs x W)
# and the most frequent clock-event reasons there (nvidia-smi's bitmask:
# 0x4 software power cap, 0x80 hardware power brake; where the driver has
# clocks_event_reasons.active). power.draw is a moving average over about a
# second, so the instantaneous reading (power.draw.instant) is logged where
# the driver has it. Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/fs-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/build/devlibs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
v=$1; d=$2; reps=$3; pairs=$4
bench=${BENCH:-./build/fusedsample_bench}  # BENCH=path: another build of the benchmark
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
power=power.draw
nvidia-smi --help-query-gpu | grep -q '"power.draw.instant"' && power=power.draw.instant
reasons=
nvidia-smi --help-query-gpu | grep -q '"clocks_event_reasons.active"' && reasons=,clocks_event_reasons.active
echo "power field: $power"
nvidia-smi --query-gpu=timestamp,clocks.sm,$power$reasons --format=csv,noheader,nounits -lms 20 >"$OUT/power_log.csv" &
smi=$!
sleep 1
: >"$OUT/windows.txt"
for pair in $pairs; do
  line=${pair%%:*}; n=${pair##*:}
  filter="^$line/V${v}_d$d/N$n/"; [[ $line == floor ]] && filter="^floor/V${v}_d$d"
  # one untimed run first compiles the kernels, so the timed window holds only launches
  "$bench" --fs_order=sequential --fs_shapes=$v,$d --fs_rows=$n --fs_reps=3 \
    --benchmark_filter="$filter" >/dev/null 2>&1
  t0=$(date +%s.%N)
  us=$("$bench" --fs_order=sequential --fs_shapes=$v,$d --fs_rows=$n --fs_reps=$reps \
        --benchmark_filter="$filter" 2>/dev/null | grep -oE "us=[0-9.]+k?" | head -1)
  t1=$(date +%s.%N)
  echo "$line $n $t0 $t1 $us" >>"$OUT/windows.txt"
done
sleep 0.2
kill $smi
python3 - "$OUT/power_log.csv" "$OUT/windows.txt" <<'PY'
import sys, datetime, collections
rows = []
for l in open(sys.argv[1]):
    p = [x.strip() for x in l.split(',')]
    try:
        t = datetime.datetime.strptime(p[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        rows.append((t, float(p[1]), float(p[2]), p[3] if len(p) > 3 else "-"))
    except (ValueError, IndexError):
        pass
print("| line | N | µs (median) | SM MHz (last quarter) | board W (last quarter) | mJ per call | clock-event reasons | samples |")
print("|---|---:|---:|---:|---:|---:|---|---:|")
for l in open(sys.argv[2]):
    line, n, t0, t1, us = (l.split() + [""])[:5]
    a = float(t0) + (float(t1) - float(t0)) * 0.75
    s = [r for r in rows if a <= r[0] <= float(t1)]
    if s:
        mhz, w = sum(r[1] for r in s) / len(s), sum(r[2] for r in s) / len(s)
        try:
            mj = f"{float(us[3:].rstrip('k')) * (1000 if us.endswith('k') else 1) * w / 1000:.1f}"
        except ValueError:
            mj = "-"
        why = ", ".join(f"{k} x{v}" for k, v in collections.Counter(r[3] for r in s).most_common(2))
        print(f"| {line} | {n} | {us[3:]} | {mhz:.0f} | {w:.0f} | {mj} | {why} | {len(s)} |")
PY
