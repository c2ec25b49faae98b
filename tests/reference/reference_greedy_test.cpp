// reference_greedy_test.cpp: the CPU reference sampler's greedy rows (the
// argmax, exact ties to the lowest index) and special values (NaN never
// wins, -inf rows pick the first token) on hand-built inputs.
//
// The inputs are hand-built (tests/support/reference_problem.hpp): with d = 8
// and hidden row n = e_c, logit_v = W[v][c] exactly (fp32 storage, one nonzero
// product), so every expectation below is computed here from the logits we
// chose, never taken from the sampler.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "fusedsample/errors.hpp"
#include "fusedsample/reference.hpp"
#include "fusedsample/sampler.hpp"
#include "tests/support/reference_problem.hpp"

namespace fs = fusedsample;

namespace {

using namespace fusedsample::testing::reference_tests;

// ------------------------------------------------------------------ greedy

TEST(ReferenceGreedy, ReturnsArgmax) {
  const std::vector<float> logits = {-3.0f, 1.5f, 0.25f, 7.0f, -8.0f, 6.999f, 2.0f, 0.0f, -1.0f, 3.0f};
  Problem p(std::int64_t(logits.size()));
  p.set_column(0, logits);
  for (std::uint64_t seed : {0ull, 1ull, 99ull}) p.add_row(0, 0.0f, seed, seed * 7);
  const auto r = p.run(3);
  for (const auto& x : r) {
    EXPECT_EQ(x.index, 3);
    EXPECT_EQ(x.best, 7.0);  // greedy adds no noise
    EXPECT_NEAR(x.runner_up, 6.999, 1e-6);
  }
}

TEST(ReferenceGreedy, ExactTiesGoToTheLowestIndex) {
  Problem p(12);
  p.set_column(0, {1, 5, 2, 5, 0, 5, 5, 3, 5, 4, 1, 5});           // tie at 1, 3, 5, 6, 8, 11
  p.set_column(1, {-2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2});  // all tied: index 0
  p.set_column(2, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 9});              // tie at the end
  p.add_row(0, 0.0f, 1, 0);
  p.add_row(1, 0.0f, 2, 0);
  p.add_row(2, 0.0f, 3, 0);
  const auto r = p.run(2);
  EXPECT_EQ(r[0].index, 1);
  EXPECT_EQ(r[1].index, 1);
  EXPECT_EQ(r[2].index, 0);
  EXPECT_EQ(r[3].index, 0);
  EXPECT_EQ(r[4].index, 10);
  EXPECT_EQ(r[5].index, 10);
}

TEST(ReferenceGreedy, NegativeLogitsAndSingleToken) {
  Problem p(5);
  p.set_column(0, {-9, -4, -7, -4.5f, -100});
  p.set_column(1, {-1e30f, -1e30f, -1e30f, -1e30f, -3e38f});
  p.add_row(0, 0.0f, 0, 0);
  p.add_row(1, 0.0f, 0, 0);
  const auto r = p.run(1);
  EXPECT_EQ(r[0].index, 1);
  EXPECT_EQ(r[1].index, 0);

  Problem one(1);
  one.set_column(0, {-5});
  one.add_row(0, 0.0f, 0, 0);
  one.add_row(0, 1.0f, 0, 0);
  const auto r1 = one.run(4);
  for (const auto& x : r1) EXPECT_EQ(x.index, 0);
}

// As the kernels (templates/epilogue.cuh, fs_params.cuh's fs_better): a NaN score never
// wins, a row of only NaN gets -1, and a row of -inf scores picks index 0.
TEST(ReferenceSpecialValues, NanNeverWinsInfRowPicksFirst) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // One problem per column pattern: a NaN weight poisons every logit whose
  // hidden row has a (zero) entry against it, since NaN * 0 = NaN.
  auto run = [](const std::vector<float>& logits, float tau, int samples) {
    Problem p(std::int64_t(logits.size()));
    p.set_column(0, logits);
    p.add_row(0, tau, 5, 6);
    return p.run(samples);
  };
  for (float tau : {0.0f, 1.0f}) {
    const auto r = run({1.0f, nan, 3.0f, nan, 2.0f}, tau, 64);
    for (const auto& x : r) {
      EXPECT_NE(x.index, 1);
      EXPECT_NE(x.index, 3);
      EXPECT_GE(x.index, 0);
    }
    if (tau == 0.0f) {
      EXPECT_EQ(r[0].index, 2);
    }
    const auto all_nan = run({nan, nan, nan}, tau, 4);
    for (const auto& x : all_nan) EXPECT_EQ(x.index, -1);
    const auto all_neg_inf = run({-inf, -inf, -inf, -inf, -inf}, tau, 4);
    for (const auto& x : all_neg_inf) EXPECT_EQ(x.index, 0);
    const auto pos_inf = run({1.0f, inf, 2.0f, inf}, tau, 4);
    for (const auto& x : pos_inf) EXPECT_EQ(x.index, 1) << "+inf logits: the first one wins";
  }
}

// The kernels' scores are fp32 (docs/rng.md section 5: score = fmaf(l, 1/tau,
// g), and the logit itself an fp32 sum): a score past the fp32 range is +-inf,
// and infinite scores tie, to the lowest index. The reference computed them in
// double, where they stayed finite and ordered, so it named the double argmax
// where every kernel returns the lowest index, and that row was a "mismatch"
// (its gap is far above the tolerance), not a near-tie.
TEST(ReferenceSpecialValues, ScoresPastTheFp32RangeTieAsInfinities) {
  // Sampled at the smallest valid temperature: 1/tau = 2^64, so |l| >= 1.8e19 overflows.
  // (Their double argmax is index 1 in both rows.)
  for (const std::vector<float>& logits : {std::vector<float>{2e19f, 3e20f, 1e20f}, {-3e20f, -2e19f, -1e20f}}) {
    Problem p(3);
    p.set_column(0, logits);
    p.add_row(0, fs::kMinTemperature, 7, 8);
    for (const auto& x : p.run(4)) EXPECT_EQ(x.index, 0) << "every score overflows fp32 (first logit " << logits[0] << ")";
  }
  // Greedy, logits whose fp32 sums overflow (3e38 + 2e38 and 3e38 + 3e38 are both inf in fp32).
  const std::vector<float> W = {3e38f, 2e38f, 3e38f, 3e38f}, H = {1.0f, 1.0f};
  const std::vector<fs::ReferenceRowParams> params = {{0.0f, 1, 2}};
  const auto r = fs::reference_sample(W.data(), H.data(), fs::DType::fp32, 2, 2, 1, params, 1);
  EXPECT_EQ(r[0].index, 0) << "both logits are +inf in fp32";
}

}  // namespace
