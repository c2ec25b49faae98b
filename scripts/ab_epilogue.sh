#!/usr/bin/env bash
# ab_epilogue.sh: same-run A/B of two fusedsample_bench builds (build/oldbench
# and build/) on forced wgmma_coop configs, at temperatures 1 and 0, small shape,
# in the order old, new, new, old per temperature (drift under the power cap
# shows as a difference between the two runs of one build).
#   scripts/ab_epilogue.sh "N1,N2" "spec;spec" [reps]
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/build/devlibs:/usr/local/cuda/lib64
rows=$1; specs=$2; reps=${3:-10}
for t in 1 0; do
  for b in oldbench new new oldbench; do
    bin=./build/fusedsample_bench; [[ $b == oldbench ]] && bin=./build/oldbench/fusedsample_bench
    echo "== $b tau=$t"
    timeout 200 $bin --fs_shapes=${SHAPE:-151936,4096} --fs_reps=$reps --fs_temperature=$t --benchmark_filter='^(floor|sweep|cublas|fused)/' \
      --fs_rows=$rows --fs_specs="$specs" 2>&1 | grep -E "^\| 1[0-9]|rror" | grep -v "^| 1[0-9]* |.*| 0.0 |"
  done
done
