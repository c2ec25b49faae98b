#!/usr/bin/env bash
# ncu_compare.sh: the counters that tell what limits a fused launch (time,
# SM clock, elapsed cycles, DRAM and L2 throughput, L2 bytes and requests,
# tensor-pipe activity), for several specs and temperatures, one table.
#   scripts/ncu_compare.sh ROWS VOCAB HIDDEN "TAU..." "SPEC;SPEC;..."
# FS_NCU_EXTRA="metric,metric" adds metrics (full names with their .sum/.pct suffix).
# Profiles the second fs_fused_kernel launch of `fusedsample demo` per case:
# its logits have std 3 and every row one seed, which costs the sampling
# 8.5-10 % more cycles than the benchmark's data (std 1, a seed per row;
# BENCHMARKS.md session 22): to compare with cuBLAS use ncu_cublas.sh's LINE=fused.
# clocks are left alone (--clock-control none), as the device notes ask.
set -uo pipefail
rows=${1:?rows}; vocab=${2:?vocab}; hidden=${3:?hidden}; taus=${4:?temperatures}; specs=${5:?specs}
export LD_LIBRARY_PATH="$PWD/build/devlibs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
tensor=$(ncu --query-metrics 2>/dev/null | grep -o "sm__pipe_tensor_op_gmma_cycles_active" | head -1)
tensor=${tensor:-sm__pipe_tensor_op_hmma_cycles_active}
metrics=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,lts__t_bytes.sum,lts__t_requests.sum,$tensor.avg.pct_of_peak_sustained_elapsed
[[ -n ${FS_NCU_EXTRA:-} ]] && metrics+=,$FS_NCU_EXTRA
echo "| spec | τ | $(echo "$metrics" | sed 's/,/ | /g') |"
IFS=';' read -ra list <<< "$specs"
for spec in "${list[@]}"; do
  for tau in $taus; do
    vals=$(ncu --clock-control none -k regex:fs_fused_kernel --launch-skip 1 --launch-count 1 --metrics "$metrics" \
      ./build/fusedsample demo --rows "$rows" --vocab "$vocab" --hidden "$hidden" --check-rows 0 --iters 2 \
      --temperature "$tau" --spec "$spec" 2>&1 | grep -E "^ +[a-z_]+__" | sed 's/  */ /g')
    row="| $spec | $tau |"
    for m in ${metrics//,/ }; do row+=" $(echo "$vals" | awk -v m="$m" '$1 == m {print $3, $2}') |"; done
    echo "$row"
    echo "$vals" >&2
  done
done
