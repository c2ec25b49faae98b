// candidate_screen.cpp: compiling and screening a tune's candidates
// (candidate_screen.hpp).
#include "autotune/candidate_screen.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "compiler/parallel_compile.hpp"

namespace fusedsample::autotune {

std::string first_line(const std::string& message) {
  std::string line = message.substr(0, message.find('\n'));
  if (line.size() > 240) line = line.substr(0, 237) + "...";
  return line;
}

ScreenedCandidates compile_and_screen(const std::vector<BucketResult>& buckets,
                                      const std::function<void(const std::string&)>& emit,
                                      const std::function<double()>& elapsed) {
  ScreenedCandidates out;
  std::set<std::string> seen;
  for (const auto& b : buckets)
    for (const auto& c : b.candidates)
      if (seen.insert(c.spec.to_string()).second) out.distinct.push_back(c.spec);
  emit(fmt::format("compiling {} distinct candidates for {} bucket(s) on {} threads...", out.distinct.size(),
                   buckets.size(), std::max(1u, std::thread::hardware_concurrency())));
  const auto t = std::chrono::steady_clock::now();
  const std::size_t step = std::max<std::size_t>(1, out.distinct.size() / 10);
  const auto outcomes = compile_all(out.distinct, 0, [&](const CompileOutcome& c, std::size_t done) {
    if (!c.ok) emit(fmt::format("[compile] {} failed: {}", c.spec.to_string(), first_line(c.error)));
    if (done % step == 0 || done == out.distinct.size())
      emit(fmt::format("[compile] {}/{} ({:.1f} s)", done, out.distinct.size(), elapsed()));
  });
  std::set<std::string> defaults;
  for (const auto& b : buckets) defaults.insert(b.default_spec.to_string());
  for (const auto& c : outcomes) {
    if (c.ok) ++out.compiled;
    else out.rejected[c.spec.to_string()] = first_line(c.error);
    // A config that spills registers is not a candidate: the epilogue's
    // noise chains must stay in registers (issue: no spills), and a built-in
    // table must never ship one (KernelResources.ShippedSpecsDoNotSpill).
    // Nor is one whose wgmma instructions ptxas serialized (KernelResources::wgmma_serialized).
    if (c.ok && (c.spill_bytes > 0 || c.wgmma_serialized) && !defaults.count(c.spec.to_string())) {
      ++out.spilling;
      out.rejected[c.spec.to_string()] =
          c.spill_bytes > 0
              ? fmt::format("fs_fused_kernel spills {} bytes of registers per thread: not a candidate", c.spill_bytes)
              : std::string("ptxas serialized fs_fused_kernel's wgmma instructions (see its log): not a candidate");
    }
  }
  out.compile_failures = int(out.rejected.size()) - out.spilling;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  return out;
}

}  // namespace fusedsample::autotune
