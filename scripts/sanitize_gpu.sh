#!/usr/bin/env bash
# sanitize_gpu.sh: NVIDIA compute-sanitizer over every kernel variant, on a GPU machine, with the carried build/.
#   scripts/sanitize_gpu.sh [demo|tests|all]     (default all; logs to $OUT, else /tmp/fs-out)
# demo:  `fusedsample demo` at V = 3001, d = 256 with one forced spec of each variant (mma_sync, wgmma, wgmma_ws,
#        wgmma_coop with epilogue warps, stream-K, `re`, `re pp`, `sk re`, clusters, `l2`, a batch past 256 rows,
#        fp32 SIMT, fp16; greedy and several samples), each checked against the CPU reference: memcheck for all,
#        racecheck and synccheck for one of each kind, initcheck for two.
# tests: GPU test suites under memcheck (API and limits, stream-K, greedy, ties, every bf16 exactness config, the
#        tuned sample buckets, the smoke tests). SamplerLimitsGpu.WorkspaceLargerThanTheGpuThrowsAndKeepsTheSampler
#        asks for ~10 TB on purpose: memcheck reports that cuMemAlloc's CUDA_ERROR_OUT_OF_MEMORY as an error;
#        SamplerApiGpu.ColdCallBesideAnotherStreamsCaptureThrows captures a blocking stream, and the Sampler's
#        query of the legacy stream answers CUDA_ERROR_STREAM_CAPTURE_IMPLICIT (three times: two refused loads,
#        one buffer check) by design: also reported.
# Exit code: 0 when every run finished with no sanitizer error but those, else 1.
set -u
OUT=${OUT:-/tmp/fs-out}; mkdir -p "$OUT"
what=${1:-all}
export LD_LIBRARY_PATH="$PWD/build/devlibs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
FUSEDSAMPLE_CACHE_DIR=$(mktemp -d /tmp/fs-cache.XXXXXX); export FUSEDSAMPLE_CACHE_DIR
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
"$CS" --version | tail -1 | tee "$OUT/sanitize.txt"
t0=$(date +%s); bad=0
specs=(
  "4|bf16 sm_90 mma_sync tv128 tn8 td128 s2 w4x1|"
  "4|bf16 sm_90 mma_sync tv128 tn8 td128 s2 w4x1|--temperature 0 --samples 2"
  "8|bf16 sm_90a wgmma tv64 tn8 td128 s4 w4x1|"
  "8|bf16 sm_90a wgmma_ws tv128 tn8 td64 s3 w12x1|"
  "16|bf16 sm_90a wgmma_coop tv128 tn16 td128 s4 w16x1|"
  "32|bf16 sm_90a wgmma_coop tv128 tn32 td128 s4 w16x1 sk l2p0|"
  "64|bf16 sm_90a wgmma_coop tv128 tn64 td128 s4 w20x1|"
  "128|bf16 sm_90a wgmma_coop tv128 tn128 td64 s6 w12x1 re pp|"
  "128|bf16 sm_90a wgmma_coop tv128 tn128 td64 s6 w12x1 re pp|--temperature 0"
  "200|bf16 sm_90a wgmma_coop tv128 tn224 td64 s4 w12x1 re|"
  "256|bf16 sm_90a wgmma_coop tv128 tn256 td64 s4 w12x1 sk re|"
  "256|bf16 sm_90a wgmma_coop tv128 tn256 td64 s4 w12x1 sk re|--samples 3 --temperature 0.7"
  "256|bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 re c2|"
  "256|bf16 sm_90a wgmma_coop tv128 tn256 td64 s4 w12x1 l2|"
  "300|bf16 sm_90a wgmma_coop tv128 tn160 td64 s5 w12x1 re|"
  "8|fp32 sm_90 simt tv128 tn8 td32 s3 w4x1|"
  "16|fp16 sm_90a wgmma_coop tv128 tn16 td128 s4 w16x1|"
)
one() {  # TOOL ROWS SPEC EXTRA...
  local tool=$1 n=$2 s=$3; shift 3
  timeout 120 "$CS" --tool "$tool" --error-exitcode 9 --print-limit 5 ./build/fusedsample demo --vocab 3001 \
    --hidden 256 --rows "$n" --check-rows 2 --iters 2 --spec "$s" "$@" >/tmp/fs-sanitize.txt 2>&1
  local rc=$?
  echo "$tool rc=$rc N=$n [$s] $* :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|check:' /tmp/fs-sanitize.txt | tr '\n' ' ')" \
    | tee -a "$OUT/sanitize.txt"
  if [[ $rc -ne 0 ]]; then bad=1; cat /tmp/fs-sanitize.txt >>"$OUT/sanitize_errors.txt"; fi
}
if [[ $what == demo || $what == all ]]; then
  for line in "${specs[@]}"; do
    IFS='|' read -r n s extra <<<"$line"
    # shellcheck disable=SC2086  # EXTRA holds several flags
    one memcheck "$n" "$s" $extra
    case "$s" in
      *mma_sync*|*wgmma_ws*|*" w16x1"|*"re pp"|*"sk re"|*" l2"|*simt*)
        [[ -z $extra ]] && one racecheck "$n" "$s" && one synccheck "$n" "$s";;
    esac
  done
  one initcheck 8 "bf16 sm_90a wgmma_coop tv128 tn16 td128 s4 w16x1"
  one initcheck 256 "bf16 sm_90a wgmma_coop tv128 tn256 td64 s4 w12x1 sk re"
fi
if [[ $what == tests || $what == all ]]; then
  filter='SamplerApiGpu.*:ExactnessStreamK.*:ExactnessGreedy.*:SamplerTiesGpu.*:SamplerLimitsGpu.*'
  filter+=':AllConfigs/ExactnessGpu.*bf16*:ExactnessTunedSamples.*:AllDtypes/SmokeGpu.*'
  "$CS" --tool memcheck --print-limit 5 ./build/tests/fusedsample_gpu_tests --gtest_filter="$filter" \
    >"$OUT/sanitize_tests.txt" 2>&1
  rc=$?
  grep -E "^\[  PASSED|^\[  FAILED|ERROR SUMMARY" "$OUT/sanitize_tests.txt" | tee -a "$OUT/sanitize.txt"
  errors=$(grep -oE "ERROR SUMMARY: [0-9]+" "$OUT/sanitize_tests.txt" | grep -oE "[0-9]+$")
  ooms=$(grep -c "^========= Program hit CUDA_ERROR_OUT_OF_MEMORY .* cuMemAlloc" "$OUT/sanitize_tests.txt")
  implicit=$(grep -c "^========= Program hit CUDA_ERROR_STREAM_CAPTURE_IMPLICIT .* cuStreamIsCapturing" \
    "$OUT/sanitize_tests.txt")
  if [[ $rc -ne 0 || -z $errors || $errors -gt $((ooms + implicit)) || $ooms -gt 1 || $implicit -gt 3 ]]; then
    bad=1
  fi
fi
echo "sanitize: $([[ $bad == 0 ]] && echo clean || echo ERRORS) in $(( $(date +%s) - t0 )) s" | tee -a "$OUT/sanitize.txt"
exit $bad
