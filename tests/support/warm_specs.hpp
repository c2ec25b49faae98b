// warm_specs.hpp: the forced configs the GPU tests compile (forced_specs of
// each dtype, the wgmma ones only on compute capability 9.0 as
// runnable_configs has it; logits_configs), each resolved to the spec a
// Sampler on a device of that compute capability compiles for it (as
// Sampler::Impl::spec_for and logits_spec_here resolve a forced spec), without
// duplicates. FUSEDSAMPLE_TEST_WARM=1 compiles them on every core before the
// GPU tests run (tests/runtime/warm_compile_gpu_test.cpp), so that the tests
// load them from the process memo instead of compiling one at a time: on an
// H200 a fresh machine's suite spent about 115 s in one test compiling them
// (BENCHMARKS.md session 64). If the Sampler resolves otherwise one day, the
// warm-up only misses (the tests compile as before).
#pragma once
#include <set>
#include <string>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "tests/support/sampler_configs.hpp"

namespace fusedsample::testing {

inline std::vector<KernelSpec> warm_specs(int cc_major, int cc_minor) {
  const Arch device = arch_for_compute_capability(cc_major, cc_minor);
  const bool hopper = cc_major == 9 && cc_minor == 0;
  std::vector<KernelSpec> out;
  std::set<std::string> seen;
  auto add = [&](const KernelSpec& s) {
    if (seen.insert(s.to_string()).second) out.push_back(s);
  };
  for (DType dtype : {DType::bf16, DType::fp16, DType::fp32})
    for (KernelSpec s : forced_specs(dtype)) {
      if (is_wgmma(s.variant) && !hopper) continue;
      if (!is_wgmma(s.variant) || s.arch != Arch::sm_90a) s.arch = device;
      s.arch = target_arch(s.variant, s.arch);
      add(s);
    }
  for (const auto& l : logits_configs())
    if (l) {
      KernelSpec s = *l;
      s.arch = device;
      add(s);
    }
  return out;
}

}  // namespace fusedsample::testing
