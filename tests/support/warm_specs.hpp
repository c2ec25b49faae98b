// warm_specs.hpp: the forced configs the GPU tests compile (forced_specs of
// each dtype, the wgmma ones only on compute capability 9.0 as
// runnable_configs has it; logits_configs), each on the arch a Sampler on a
// device of that compute capability compiles it for (compile_arch, as
// Sampler::Impl::spec_for; a logits spec the device's arch, as
// logits_spec_here), without duplicates. FUSEDSAMPLE_TEST_WARM=1 compiles them on every core before the
// GPU tests run (tests/runtime/warm_compile_gpu_test.cpp), so that the tests
// load them from the process memo instead of compiling one at a time: on an
// H200 a fresh machine's suite spent about 115 s in one test compiling them
// (BENCHMARKS.md session 64).
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
      s.arch = compile_arch(s.variant, s.arch, device);
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
