#!/usr/bin/env bash
# ncu_l2_sources.sh: who sends the L2 its requests. Lists the lts__t_{sectors,requests}
# metrics broken down by source unit (srcunit_*: tex = the SMs' loads, stores,
# atomics and bulk copies; gcc = the GPC's constant and instruction caches)
# that this GPU's Nsight Compute knows, and the warp-stall ratios for missing
# instructions, then runs scripts/ncu_compare.sh with them added.
#   scripts/ncu_l2_sources.sh ROWS VOCAB HIDDEN "TAU..." "SPEC;SPEC;..."
set -uo pipefail
q=$(ncu --query-metrics 2>/dev/null | awk '{print $1}')
extra=$(echo "$q" | grep -E '^lts__t_(sectors|requests)_srcunit_[a-z]+$' | sed 's/$/.sum/' | paste -sd, -)
stall=$(echo "$q" | grep -E '^smsp__average_warps_issue_stalled_(no_instruction|branch_resolving)_per_issue_active$' |
  sed 's/$/.ratio/' | paste -sd, -)
echo "extra metrics: $extra,$stall"
FS_NCU_EXTRA="$extra${stall:+,$stall}" scripts/ncu_compare.sh "$@"
