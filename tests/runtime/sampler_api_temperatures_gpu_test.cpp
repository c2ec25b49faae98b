// sampler_api_temperatures_gpu_test.cpp: invalid temperatures on a GPU: a
// row whose per-row temperature is negative, NaN, infinite or below 2^-64 gets -1, and
// such a scalar temperature throws before anything is launched.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "runtime/device_memory.hpp"
#include "tests/support/device_buffers.hpp"
#include "tests/support/gpu_test_support.hpp"
#include "tests/support/reference_comparison.hpp"
#include "tests/support/sampler_api_problem.hpp"
#include "tests/support/sampler_configs.hpp"

namespace fusedsample {
namespace {

using namespace testing::sampler_api_tests;

// A row whose device temperature is negative, NaN, infinite or positive
// below 2^-64 gets -1 (every sample, int64 and int32); the other rows, greedy
// ones included, are sampled normally and match the reference.
TEST_F(SamplerApiGpu, InvalidTemperatureRowsGetMinusOne) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // Positive below 2^-64 is invalid too (1e-39: 1/tau is inf); 2^-64 itself is sampled.
  const std::vector<float> temps{1.0f, -1.0f, nan, inf, 0.0f, 0.5f, -0.0f, -inf, 2.0f, -1e-30f, 0.8f,
                                 1e-39f, 1e-30f, kMinTemperature};
  const std::vector<bool> invalid{false, true, true, true, false, false, false, true, false, true, false,
                                  true, true, false};
  const std::int64_t N = std::int64_t(temps.size());
  const Problem pb(DType::bf16, rng, 5003, 136, N);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  const int S = 2;
  const std::size_t n = std::size_t(N * S);
  const DeviceMemory dtemps = to_device(temps);
  const std::uint64_t seed = rng(), offset = rng();

  SampleArgs a = pb.args(S);
  a.temperatures = dtemps.as<const float>();
  a.seed = seed;
  a.offset = offset;
  const auto [got, got32] = sample_both_index_types(sampler, a, n);
  for (std::int64_t r = 0; r < N; ++r)
    for (int s = 0; s < S; ++s) {
      const std::size_t i = std::size_t(r * S + s);
      if (invalid[std::size_t(r)]) {
        EXPECT_EQ(got[i], -1) << "row " << r << " temperature " << temps[std::size_t(r)];
      } else {
        EXPECT_TRUE(got[i] >= 0 && got[i] < pb.V) << "row " << r << " temperature " << temps[std::size_t(r)] << ": "
                                                  << got[i];
      }
      EXPECT_EQ(got32[i], got[i]) << "int32 row " << r;
    }
  std::vector<ReferenceRowParams> rp;
  for (float t : temps) rp.push_back({t, seed, offset});
  const auto ref = reference_sample(pb.w.data(), pb.h.data(), pb.dtype, pb.V, pb.d, N, rp, S);
  testing::compare_with_reference(got, ref, pb.V, S, "invalid temperatures");
}

// Scalar temperatures are checked on the host: negative, NaN, infinite and
// positive below 2^-64 ones throw InvalidArgument before anything is launched.
TEST_F(SamplerApiGpu, InvalidScalarTemperatureThrows) {
  const Problem pb(DType::bf16, rng, 1000, 64, 4);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  DeviceMemory out(std::size_t(pb.N) * 8);
  testing::poison(out);
  for (const float t : {-1.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 1e-39f,
                        1e-30f}) {
    SampleArgs a = pb.args(out, 1);
    a.temperature = t;
    EXPECT_THROW(sampler.sample(a, nullptr), InvalidArgument) << "temperature " << t;
  }
  const auto untouched = from_device<std::int64_t>(out, std::size_t(pb.N));
  for (std::int64_t v : untouched) EXPECT_EQ(v, testing::kPoison64) << "a refused call wrote the output";
}

}  // namespace
}  // namespace fusedsample
