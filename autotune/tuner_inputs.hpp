// tuner_inputs.hpp: host data for the tuner. Exact-arithmetic inputs for the
// correctness check (small integers: every dot product and every partial sum
// is an integer below 2^24 in magnitude, so fp32 accumulation is exact in any
// order and every correct config gives bit-identical samples) and random
// inputs for timing. Both are a pure function of (index, salt), filled on all
// cores.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fusedsample/kernel_spec.hpp"

namespace fusedsample::autotune {

// n values in `dtype` storage, each an integer uniform in [-magnitude, magnitude].
std::vector<std::uint8_t> exact_integers(DType dtype, std::size_t n, int magnitude, std::uint64_t salt);
// n values in `dtype` storage, roughly N(0, scale^2).
std::vector<std::uint8_t> random_values(DType dtype, std::size_t n, float scale, std::uint64_t salt);

// Magnitudes of W and H for the exact check at hidden size d: W in {-2..2}
// and H in {-1, 0, 1}, or W in {-1, 0, 1} once 2 * d would exceed 2^24.
struct ExactRanges {
  int weights = 2;
  int hidden = 1;
};
ExactRanges exact_ranges(std::int64_t hidden);

// The check's temperature: max(8, sqrt(d)). The logits' standard deviation is
// about sqrt(d) x 1.15, so logits / tau stay O(1): a broad distribution in
// which the noise, not the largest logit, decides most samples.
float exact_check_temperature(std::int64_t hidden);

}  // namespace fusedsample::autotune
