// noise_skip_test.cpp: the host build of templates/noise_skip.cuh. A word
// below fs_noise_skip_word(thr, lmax, 1/tau) must give every logit <= lmax an
// approximate score below thr (the epilogue then skips the value), and the
// rule must rule out nearly all words once thr is well above the logits.
// The device build differs only in exp2 (ex2.approx, within the 1.001
// factor); the GPU exactness tests run it. Checked by mutation: a natural
// instead of a binary exponent, or dropping the one-level guard, fails here.
// The slack and the 1.001 factor are not binding (1 - U <= exp(-y) and the
// guard of 1.5 levels leave more room than either), so removing them passes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "templates/noise_skip.cuh"

namespace {

constexpr double kLevels = 8388608.0;  // 2^23

// The largest approximate score a word below `word` can give a logit <= lmax:
// the exact noise is monotone in the word's top 23 bits (Gumbel tests) and the
// approximation is within FS_GUMBEL_APPROX_ERR of it.
double worst_skipped_score(fs_u32 word, float lmax, float inv_tau) {
  const fs_u32 k = (word >> 9) - 1;
  return double(lmax) * double(inv_tau) + double(fs_gumbel_from_bits(k << 9)) + double(FS_GUMBEL_APPROX_ERR);
}

TEST(NoiseSkip, SkippedWordsCannotReachTheThreshold) {
  std::mt19937_64 rng(20261121);
  // Gaps y = thr - lmax / tau where the rule bites (the noise spans [-2.8, 16.6]),
  // and wide random thresholds and logits.
  std::uniform_real_distribution<float> thr_d(-60.0f, 80.0f), l_d(-40.0f, 40.0f), gap_d(-3.0f, 18.0f);
  const float inv_taus[] = {1.0f, 2.0f, 1.0f / 0.7f, 0.5f, 1.0f / 3.0f, 100.0f};
  int skipping = 0;
  for (int i = 0; i < 400000; ++i) {
    const float lmax = l_d(rng), w = inv_taus[i % 6];
    const float thr = i % 2 ? thr_d(rng) : lmax * w + gap_d(rng);
    const fs_u32 word = fs_noise_skip_word(thr, lmax, w);
    if (word == 0) continue;
    ++skipping;
    ASSERT_EQ(word & 0x1ffu, 0u);
    // Below thr with room for the fp32 rounding of the score (2^-24 relative).
    const double s = worst_skipped_score(word, lmax, w);
    ASSERT_LT(s + 1e-6 * (1.0 + std::fabs(thr)), double(thr)) << "thr " << thr << " lmax " << lmax << " 1/tau " << w;
  }
  EXPECT_GT(skipping, 100000);
}

TEST(NoiseSkip, RulesOutNearlyAllWordsFarBelowTheThreshold) {
  for (double gap : {4.0, 8.0, 12.0, 16.0}) {
    const fs_u32 word = fs_noise_skip_word(float(gap), 0.0f, 1.0f);
    // Real numbers: the words that may reach the gap are a share 1 - exp(-exp(-gap)) ~ exp(-gap).
    const double passing = kLevels - double(word >> 9);
    const double ideal = kLevels * -std::expm1(-std::exp(-gap));
    EXPECT_GE(passing, ideal) << "gap " << gap;
    EXPECT_LE(passing, 1.02 * ideal + 8.0) << "gap " << gap << ": the rule skips too little";
  }
  // With the noise's largest value below the gap, every word but the top level is ruled out.
  EXPECT_EQ(fs_noise_skip_word(100.0f, 0.0f, 1.0f) >> 9, fs_u32(kLevels - 2));
}

TEST(NoiseSkip, NothingIsSkippedWithoutAFiniteBound) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(fs_noise_skip_word(-inf, 0.0f, 1.0f), 0u);   // no bound yet
  EXPECT_EQ(fs_noise_skip_word(nan, 0.0f, 1.0f), 0u);    // B = +inf gives a NaN threshold
  EXPECT_EQ(fs_noise_skip_word(5.0f, nan, 1.0f), 0u);    // all four logits NaN
  EXPECT_EQ(fs_noise_skip_word(5.0f, inf, 1.0f), 0u);    // an infinite logit may win
  EXPECT_EQ(fs_noise_skip_word(-3.0f, 0.0f, 1.0f), 0u);  // the bound is below what any noise reaches
  EXPECT_EQ(fs_noise_skip_word(5.0f, 1e30f, 1e30f), 0u);  // the scaled logit overflows
}

}  // namespace
