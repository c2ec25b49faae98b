// demo_data.hpp: seeded normal random inputs for `fusedsample demo`.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fusedsample/kernel_spec.hpp"

namespace fusedsample::cli {

// `count` values in `dtype` storage (2 or 4 bytes each), distributed as
// N(0, stddev^2) and fixed by (seed, stream). Values come from a table of
// 65536 normal draws indexed by a SplitMix64 stream, filled in fixed 1 Mi
// element chunks on all cores: fast enough for a 151936 x 4096 LM head, and
// the first k elements do not depend on `count` or the thread count.
std::vector<std::uint8_t> random_normal(DType dtype, std::size_t count, double stddev, std::uint64_t seed,
                                        std::uint64_t stream);

}  // namespace fusedsample::cli
