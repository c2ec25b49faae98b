#!/usr/bin/env bash
# ncu_cublas.sh: Nsight Compute counters of the cuBLAS GEMM kernels that
# fusedsample_bench's cuBLAS line launches (its search over the heuristic's
# algorithms included), one row per launch with the kernel's name; the
# fastest kernel is the one the line times. The counters are ncu_compare.sh's
# (time, SM clock, cycles, DRAM and L2 bytes, tensor-pipe activity), so the
# two tables compare the GEMM alone with a fused launch of the same shape.
#   scripts/ncu_cublas.sh ROWS VOCAB HIDDEN [LAUNCHES] [LINE]   (LAUNCHES: how many to profile, default 40;
#                                                             LINE: the benchmark line, default cublas)
# LINE=fused profiles our kernel on the benchmark's own data (logits of std 1, a seed per row), which the
# sampling's cost depends on: `fusedsample demo`, which ncu_compare.sh runs, draws logits of std 3 and gives
# every row one seed.
# FS_NCU_EXTRA="metric,metric" adds metrics (full names with their .sum/.pct suffix), as in ncu_compare.sh.
# BENCH=build/bench_X profiles another fusedsample_bench build (scripts/ab_bench_builds.sh says how to make one).
# FS_SPEC="spec" with LINE=sweep profiles that forced config (--fs_specs) instead of the table's.
# Clocks are left alone (--clock-control none), as the device notes ask.
set -uo pipefail
rows=${1:?rows}; vocab=${2:?vocab}; hidden=${3:?hidden}; count=${4:-40}; line=${5:-cublas}
export LD_LIBRARY_PATH="$PWD/build/devlibs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
tensor=$(ncu --query-metrics 2>/dev/null | grep -o "sm__pipe_tensor_op_gmma_cycles_active" | head -1)
tensor=${tensor:-sm__pipe_tensor_op_hmma_cycles_active}
metrics=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum
metrics+=,dram__bytes_write.sum,lts__t_bytes.sum,$tensor.avg.pct_of_peak_sustained_elapsed
[[ -n ${FS_NCU_EXTRA:-} ]] && metrics+=,$FS_NCU_EXTRA
kernels=(); [[ $line == fused || $line == sweep ]] && kernels=(-k regex:fs_fused_kernel)  # the bench sets up cuBLAS for every line
ncu --clock-control none "${kernels[@]}" --launch-count "$count" --metrics "$metrics" --csv \
  "${BENCH:-./build/fusedsample_bench}" --fs_order=sequential --fs_shapes="$vocab,$hidden" --fs_rows="$rows" --fs_reps=1 \
  ${FS_SPEC:+"--fs_specs=$FS_SPEC"} --benchmark_filter="^$line/" >/tmp/ncu_cublas.csv 2>/tmp/ncu_cublas.err
python3 - "$metrics" <<'PY'
import csv, sys, collections
metrics = sys.argv[1].split(',')
rows = [r for r in csv.reader(open('/tmp/ncu_cublas.csv')) if len(r) > 10]
if not rows:
    sys.exit("ncu_cublas.sh: no profile rows; see /tmp/ncu_cublas.err")
h = rows[0]
ix = {k: h.index(k) for k in ('ID', 'Kernel Name', 'Metric Name', 'Metric Unit', 'Metric Value')}
launch = collections.OrderedDict()
for r in rows[1:]:
    d = launch.setdefault(r[ix['ID']], {'name': r[ix['Kernel Name']]})
    d[r[ix['Metric Name']]] = f"{r[ix['Metric Value']]} {r[ix['Metric Unit']]}"
print("| launch | kernel | " + " | ".join(metrics) + " |")
print("|---|---|" + "---:|" * len(metrics))
for i, d in launch.items():
    if d['name'].startswith('fs_stream'):
        continue
    print(f"| {i} | `{d['name'][:110]}` | " + " | ".join(d.get(m, '-') for m in metrics) + " |")
PY
