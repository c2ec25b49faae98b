// tuner_inputs_test.cpp: the tuner's exact-arithmetic inputs really make
// every accumulation order give the same fp32 result, and both generators are
// deterministic.
#include "autotune/tuner_inputs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "fusedsample/numeric.hpp"

namespace fs = fusedsample;
namespace at = fusedsample::autotune;

namespace {

float value(const std::vector<std::uint8_t>& s, fs::DType d, std::size_t i) {
  if (d == fs::DType::fp32) {
    float f;
    std::memcpy(&f, &s[i * 4], 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, &s[i * 2], 2);
  return d == fs::DType::bf16 ? fs::bf16_to_float(h) : fs::fp16_to_float(h);
}

}  // namespace

TEST(TunerInputs, ExactIntegersCoverTheRangeAndNothingElse) {
  for (fs::DType d : {fs::DType::bf16, fs::DType::fp16, fs::DType::fp32}) {
    const auto v = at::exact_integers(d, 100000, 2, 7);
    ASSERT_EQ(v.size(), 100000 * fs::dtype_size(d));
    int seen[5] = {};
    for (std::size_t i = 0; i < 100000; ++i) {
      const float f = value(v, d, i);
      ASSERT_EQ(f, std::round(f));
      ASSERT_GE(f, -2.0f);
      ASSERT_LE(f, 2.0f);
      ++seen[int(f) + 2];
    }
    for (int k = 0; k < 5; ++k) EXPECT_GT(seen[k], 15000) << "value " << k - 2;
    EXPECT_EQ(v, at::exact_integers(d, 100000, 2, 7));
    EXPECT_NE(v, at::exact_integers(d, 100000, 2, 8));
  }
}

TEST(TunerInputs, DotProductsAreExactInAnyOrder) {
  const std::int64_t d = 4096;
  const auto r = at::exact_ranges(d);
  EXPECT_EQ(r.weights, 2);
  EXPECT_EQ(r.hidden, 1);
  const auto w = at::exact_integers(fs::DType::bf16, d, r.weights, 1);
  const auto h = at::exact_integers(fs::DType::bf16, d, r.hidden, 2);
  std::vector<float> prod(d);
  double exact = 0;
  for (std::int64_t k = 0; k < d; ++k) {
    prod[k] = value(w, fs::DType::bf16, k) * value(h, fs::DType::bf16, k);
    exact += prod[k];
  }
  std::mt19937 rng(1);
  for (int trial = 0; trial < 20; ++trial) {
    std::shuffle(prod.begin(), prod.end(), rng);
    float acc = 0;
    for (float p : prod) acc += p;
    EXPECT_EQ(double(acc), exact);
  }
  // Very deep models fall back to W in {-1, 0, 1} so |sums| <= d <= 2^24.
  EXPECT_EQ(at::exact_ranges(std::int64_t(1) << 24).weights, 1);
}

TEST(TunerInputs, CheckTemperatureKeepsTheDistributionBroad) {
  EXPECT_EQ(at::exact_check_temperature(8), 8.0f);
  EXPECT_EQ(at::exact_check_temperature(4096), 64.0f);
}

TEST(TunerInputs, RandomValuesAreDeterministicAndSpread) {
  const auto a = at::random_values(fs::DType::fp32, 1 << 16, 0.5f, 3);
  EXPECT_EQ(a, at::random_values(fs::DType::fp32, 1 << 16, 0.5f, 3));
  double sum = 0, sq = 0;
  for (std::size_t i = 0; i < (1 << 16); ++i) {
    const double f = value(a, fs::DType::fp32, i);
    sum += f;
    sq += f * f;
  }
  const double mean = sum / (1 << 16), var = sq / (1 << 16) - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(var, 0.25, 0.02);
}
