// demo_check.hpp: GPU samples against the CPU reference.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fusedsample/reference.hpp"

namespace fusedsample::cli {

struct CheckReport {
  std::int64_t exact = 0;       // same index as the reference
  std::int64_t close = 0;       // different, but the reference's best and runner-up are within its tolerance
  std::int64_t mismatches = 0;  // different and clearly separated: a real error
  std::vector<std::string> details;  // one line per close call or mismatch (the first few)
};

// gpu: [rows][samples] indices from the GPU (at least `ref.size()` entries,
// row-major); ref: reference_sample's results for the same leading rows.
CheckReport check_samples(const std::vector<std::int64_t>& gpu, const std::vector<ReferenceResult>& ref,
                          int num_samples, std::size_t max_details = 10);

}  // namespace fusedsample::cli
