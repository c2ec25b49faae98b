#!/usr/bin/env bash
# ncu_summary.sh: Nsight Compute counters of one fused-kernel launch, for
# BENCHMARKS.md (achieved DRAM bandwidth, L2 traffic, tensor-pipe activity).
# Runs `fusedsample demo` with a forced or tuned spec and profiles its second
# launch of fs_fused_kernel (the first may include module-load effects).
#   scripts/ncu_summary.sh ROWS VOCAB HIDDEN [SPEC] [TEMPERATURE]
# Clocks are left alone (--clock-control none), as the device notes ask.
set -uo pipefail
rows=${1:?rows}; vocab=${2:?vocab}; hidden=${3:?hidden}; spec=${4:-}; tau=${5:-1.0}
export LD_LIBRARY_PATH="$PWD/build/devlibs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
metrics=gpu__time_duration.sum
metrics+=,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,lts__t_bytes.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed
metrics+=,sm__inst_executed_pipe_tensor_op_gmma.sum,sm__inst_executed.sum
metrics+=,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_elapsed
args=(demo --rows "$rows" --vocab "$vocab" --hidden "$hidden" --check-rows 0 --iters 2 --temperature "$tau")
[[ -n $spec ]] && args+=(--spec "$spec")
ncu --clock-control none -k regex:fs_fused_kernel --launch-skip 1 --launch-count 1 --metrics "$metrics" \
  ./build/fusedsample "${args[@]}" 2>&1 | grep -E "fs_fused_kernel|^ +[a-z_]+__|==ERR|rror" | sed 's/  */ /g'
