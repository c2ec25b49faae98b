#!/usr/bin/env bash
# ncu_smem.sh: shared-memory and L2 load of a fused launch: shared-memory bank
# reads and writes, L1 wavefronts of shared loads and stores, the tensor pipe,
# and the L2's busiest sub-unit, as % of peak, added to scripts/ncu_compare.sh.
#   scripts/ncu_smem.sh ROWS VOCAB HIDDEN "TAU..." "SPEC;SPEC;..."
set -uo pipefail
q=$(ncu --query-metrics 2>/dev/null | awk '{print $1}')
extra=$(echo "$q" | grep -E '^(l1tex__data_bank_(reads|writes)|l1tex__data_pipe_lsu_wavefronts_mem_shared|l1tex__throughput|sm__memory_throughput)$' |
  sed 's/$/.avg.pct_of_peak_sustained_elapsed/' | paste -sd, -)
echo "extra metrics: $extra"
FS_NCU_EXTRA="$extra" scripts/ncu_compare.sh "$@"
