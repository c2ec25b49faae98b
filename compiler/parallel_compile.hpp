// parallel_compile.hpp: compile many kernel specs at once. Each goes through
// compile_kernel() (the process memo, then the on-disk module cache, then
// NVRTC, which is thread-safe), so the results land in the disk cache and a
// later Sampler with the same spec loads them without compiling; a kernel
// the process memoized earlier is stored there too if the cache lacks it.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "fusedsample/kernel_spec.hpp"

namespace fusedsample {

struct CompileOutcome {
  KernelSpec spec;
  bool ok = false;
  std::string error;  // the exception's message when !ok
  int spill_bytes = 0;  // ptxas's spill stores + loads of fs_fused_kernel (bytes per thread)
  bool wgmma_serialized = false;  // ptxas serialized fs_fused_kernel's wgmma instructions (its advisory)
  double seconds = 0;
};

// Compiles every spec on `threads` worker threads (0: hardware_concurrency()).
// `on_done` (optional) is called after each spec, serialized, with the number
// finished so far. Never throws for a spec that fails: its outcome says why.
// Outcomes are in the order of `specs`.
std::vector<CompileOutcome> compile_all(const std::vector<KernelSpec>& specs, unsigned threads = 0,
                                        const std::function<void(const CompileOutcome&, std::size_t done)>& on_done = {});

}  // namespace fusedsample
