#include "tools/demo_check.hpp"

#include <fmt/format.h>

namespace fusedsample::cli {

CheckReport check_samples(const std::vector<std::int64_t>& gpu, const std::vector<ReferenceResult>& ref,
                          int num_samples, std::size_t max_details) {
  CheckReport r;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const ReferenceResult& want = ref[i];
    const std::int64_t got = gpu[i];
    const std::int64_t row = std::int64_t(i) / num_samples, sample = std::int64_t(i) % num_samples;
    if (got == want.index) {
      ++r.exact;
      continue;
    }
    const double gap = want.best - want.runner_up;
    // A valid row's winner may legitimately differ only if the top two
    // reference scores are closer than the fp32 accumulation error bound.
    const bool close = want.index >= 0 && got >= 0 && gap < want.tolerance;
    (close ? r.close : r.mismatches)++;
    if (r.details.size() < max_details)
      r.details.push_back(fmt::format("{} row {} sample {}: GPU {} vs reference {} (best - runner-up = {:.3g}, tolerance {:.3g})",
                                      close ? "close   " : "MISMATCH", row, sample, got, want.index, gap,
                                      want.tolerance));
  }
  return r;
}

}  // namespace fusedsample::cli
