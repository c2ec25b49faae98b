#!/usr/bin/env bash
# power_probe.sh: SM clock and board power while one benchmark line runs on
# its own (fusedsample_bench --fs_order=sequential, one line per process),
# sampled by nvidia-smi every 10 ms. Answers whether a line runs at the power
# limit and at what clock, so two lines (our fused kernel and cuBLAS's GEMM)
# can be compared by energy as well as by time.
#   scripts/power_probe.sh REPS LINE [LINE ...]
# LINE: NAME/V/d/N with NAME fused, cublas or unfused, e.g.
# fused/151936/4096/256. REPS must make the timed loop last well over a
# second: the samples of the last second before the process ends but 0.15 s
# (the timed loop; the setup before it also runs cuBLAS's autotuning) are the
# ones summarized. Prints per line the bench's median µs, the median SM clock
# and board power over that window, the energy per call (µs x W) and the most
# frequent clock-event reasons (nvidia-smi's bitmask: 0x4 software power cap,
# 0x80 hardware power brake; 0x1 idle). Raw samples and logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/fs-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/build/devlibs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
reps=$1; shift
printf "| line | median µs | samples | SM MHz | W | mJ per call | clock-event reasons |\n|---|---:|---:|---:|---:|---:|---|\n"
for line in "$@"; do
  IFS=/ read -r name V d N <<<"$line"
  base="$OUT/power_${name}_${V}_${d}_${N}"
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw.instant,clocks_event_reasons.active \
    --format=csv,noheader,nounits -lms 10 >"$base.csv" 2>&1 &
  smi=$!
  ./build/fusedsample_bench --fs_order=sequential --fs_shapes="$V,$d" --fs_rows="$N" --fs_reps="$reps" \
    --benchmark_filter="^${name}/V${V}_d${d}/N${N}(/|\$)" >"$base.log" 2>&1
  end=$(date +%s.%N)
  sleep 0.2
  kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null
  python3 - "$base" "$line" "$end" <<'PY'
import sys, statistics, collections, datetime, re
base, line, end = sys.argv[1], sys.argv[2], float(sys.argv[3])
us = '?'
for r in open(base + '.log'):
    m = re.search(r'\bus=([\d.]+)\s', r)
    if m: us = m.group(1)
rows = []
for r in open(base + '.csv'):
    f = [x.strip() for x in r.split(',')]
    try:
        t = datetime.datetime.strptime(f[0], '%Y/%m/%d %H:%M:%S.%f').timestamp()
        rows.append((t, float(f[1]), float(f[2]), f[3]))
    except (ValueError, IndexError):
        pass
win = [r for r in rows if end - 1.0 <= r[0] <= end - 0.15]
if not win:
    print(f"| {line} | {us} | 0 | - | - | - | - |"); sys.exit()
mhz = statistics.median(r[1] for r in win); w = statistics.median(r[2] for r in win)
why = collections.Counter(r[3] for r in win).most_common(2)
mj = float(us) * w / 1000 if us != '?' else float('nan')
print(f"| {line} | {us} | {len(win)} | {mhz:.0f} | {w:.0f} | {mj:.1f} | {', '.join(f'{k} x{v}' for k, v in why)} |")
PY
done
