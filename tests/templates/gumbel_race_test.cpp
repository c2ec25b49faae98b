// gumbel_race_test.cpp: the host build of templates/gumbel_race.cuh, the
// noise of the contract (docs/rng.md section 4). Its bounds and the facts the
// kernels' group test rests on (every token's noise is at most the lead's,
// and the lead's is G(u) + log 16 up to a few ulp), and its distribution: the
// lead position is uniform, every position's noise is a standard Gumbel, and
// Gumbel-max inside one group and across group edges samples softmax.
// Checked by mutation: dropping the / 16, taking the lead from the high bits
// of the word or letting the lead's token draw its own word fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "templates/gumbel_bound.cuh"
#include "templates/gumbel_race.cuh"
#include "templates/noise_skip.cuh"

namespace {

constexpr std::uint32_t kLevels = 1u << 23;

// Upper 1e-6 quantile of chi-squared with df degrees of freedom (Wilson-Hilferty).
double chi2_critical_1e6(int df) {
  const double z = 4.753424308822899, a = 2.0 / (9.0 * df);
  return df * std::pow(1 - a + z * std::sqrt(a), 3);
}

double chi2(const std::vector<double>& counts, const std::vector<double>& p) {
  double n = 0, s = 0;
  for (double c : counts) n += c;
  for (std::size_t i = 0; i < p.size(); ++i) s += (counts[i] - n * p[i]) * (counts[i] - n * p[i]) / (n * p[i]);
  return s;
}

TEST(GumbelRace, NoiseBoundsHoldAndAreTight) {
  float hi = -INFINITY;
  for (std::uint32_t k = 0; k < kLevels; ++k) {
    const fs_u32 gw = k << 9;
    hi = std::max(hi, fs_token_gumbel(gw, 0u, fs_group_lead(gw)));
  }
  EXPECT_LE(hi, FS_NOISE_MAX);
  EXPECT_LE(double(FS_NOISE_MAX) - hi, 1e-3) << "FS_NOISE_MAX is a loose bound";
  // The smallest: a non-lead token with the largest a and the largest -log(u).
  const float lo = fs_token_gumbel(0u, 0u, 1);
  EXPECT_GE(lo, FS_NOISE_MIN);
  EXPECT_LE(lo - double(FS_NOISE_MIN), 1e-3) << "FS_NOISE_MIN is a loose bound";
  std::mt19937 rng(7);
  for (int i = 0; i < 1000000; ++i) {
    const fs_u32 gw = rng(), w = rng();
    const float g = fs_token_gumbel(gw, w, int(rng() & 15));
    ASSERT_GE(g, FS_NOISE_MIN);
    ASSERT_LE(g, FS_NOISE_MAX);
  }
}

// The group test's premises: the lead's noise grows with the group word's
// level (so the largest skipped level bounds every skipped word), is G(u) +
// log 16 within 1e-5, and no token of the group has more noise than the lead.
TEST(GumbelRace, LeadBoundsTheGroupAndIsAShiftedGumbel) {
  float prev = -INFINITY;
  double worst_shift = 0;
  for (std::uint32_t k = 0; k < kLevels; ++k) {
    const fs_u32 gw = k << 9;
    const float lead = fs_token_gumbel(gw, 0u, fs_group_lead(gw));
    ASSERT_GE(lead, prev) << "lead noise not monotone at level " << k;
    prev = lead;
    worst_shift = std::max(worst_shift, std::fabs(double(lead) - (double(fs_gumbel_from_bits(gw)) + std::log(16.0))));
    // Non-lead tokens, with the smallest own exponential (the closest to the lead) and one that varies.
    const fs_u32 close = 0xfffffe00u, other = (k * 2654435761u) & 0xfffffe00u;
    const int pos = (fs_group_lead(gw) + 1) & 15;
    ASSERT_LE(fs_token_gumbel(gw, close, pos), lead) << "level " << k;
    ASSERT_LE(fs_token_gumbel(gw, other, pos), lead) << "level " << k;
  }
  EXPECT_LE(worst_shift, 1e-5);
}

// A group word below fs_group_skip_word(T, lmax, 1/tau) leaves every value of
// the group (logits <= lmax) with an approximate score below T.
TEST(GumbelRace, GroupSkipWordRulesOutOnlyGroupsBelowTheThreshold) {
  std::mt19937_64 rng(20261121);
  std::uniform_real_distribution<float> l_d(-40.0f, 40.0f), gap_d(-1.0f, 22.0f);
  const float inv_taus[] = {1.0f, 2.0f, 1.0f / 0.7f, 0.5f, 100.0f};
  int skipping = 0;
  for (int i = 0; i < 200000; ++i) {
    const float lmax = l_d(rng), w = inv_taus[i % 5];
    const float thr = lmax * w + gap_d(rng);
    const fs_u32 word = fs_group_skip_word(thr, lmax, w);
    if (word == 0) continue;
    ++skipping;
    const fs_u32 top_skipped = word - 512u;  // the largest skipped level
    const double s = double(lmax) * double(w) +
                     double(fs_token_gumbel(top_skipped, 0u, fs_group_lead(top_skipped))) + double(FS_GUMBEL_APPROX_ERR);
    ASSERT_LT(s + 1e-6 * (1.0 + std::fabs(thr)), double(thr)) << "thr " << thr << " lmax " << lmax << " 1/tau " << w;
  }
  EXPECT_GT(skipping, 150000);
  // Far below the threshold nearly every group is ruled out: with T - l/tau = 14,
  // the lead noise passes with probability ~16 exp(-14) (real numbers).
  const fs_u32 word = fs_group_skip_word(14.0f, 0.0f, 1.0f);
  const double passing = double(kLevels) - double(word >> 9);
  const double ideal = double(kLevels) * -std::expm1(-16.0 * std::exp(-14.0));
  EXPECT_GE(passing, ideal);
  EXPECT_LE(passing, 1.02 * ideal + 8.0);
}

// fs_log is monotone on every float the noise passes it: uniforms u >= 2^-24
// and the race's sums a (+ e), from E_min / 16 (3.7e-9) to 1.04 + 16.64. With
// fs_log(1) = 0 this makes -log(u) >= 0, so a + e >= a in fp32 and every
// token's noise -fs_log(a + e) is at most the lead's -fs_log(a): the bound
// the register epilogue's group test stands on (fs_group_may_win). Every
// float of [2^-29, 32), on two threads.
TEST(GumbelRace, LogIsMonotoneWhereTheNoiseUsesIt) {
  EXPECT_EQ(fs_log(1.0f), 0.0f);
  const fs_u32 lo = fs_float_bits(std::ldexp(1.0f, -29)), hi = fs_float_bits(32.0f), mid = lo + (hi - lo) / 2;
  std::uint64_t drops[2] = {0, 0};
  fs_u32 first_drop[2] = {0, 0};
  auto scan = [&](int part, fs_u32 from, fs_u32 to) {  // pairs (b - 1, b) for b in (from, to]
    float prev = fs_log(fs_bits_float(from));
    for (fs_u32 b = from + 1; b <= to; ++b) {
      const float y = fs_log(fs_bits_float(b));
      if (y < prev && drops[part]++ == 0) first_drop[part] = b;
      prev = y;
    }
  };
  std::thread other(scan, 1, mid, hi);
  scan(0, lo, mid);
  other.join();
  EXPECT_EQ(drops[0], 0u) << "fs_log falls at " << fs_bits_float(first_drop[0]);
  EXPECT_EQ(drops[1], 0u) << "fs_log falls at " << fs_bits_float(first_drop[1]);
}

// fs_group_may_win(lmax, 1/tau, lead noise, B) false means no token of the
// group (logits <= lmax, any token word) has an exact score reaching B; and the
// test is tight: with B at the lead's own score (its logit lmax) the group
// may win (a tie), one ulp above it not. Random groups, temperatures and logits.
TEST(GumbelRace, GroupMayWinIsFalseOnlyWhenNoScoreReachesTheBound) {
  std::mt19937_64 rng(20261122);
  std::uniform_real_distribution<float> l_d(-40.0f, 40.0f), gap_d(-0.5f, 12.0f), drop_d(0.0f, 3.0f);
  const float inv_taus[] = {1.0f, 2.0f, 1.0f / 0.7f, 0.5f, 100.0f, 1.0f / 3.0f};
  int ruled_out = 0;
  for (int i = 0; i < 100000; ++i) {
    const fs_u32 gw = fs_u32(rng());
    const float lmax = l_d(rng), w = inv_taus[i % 6];
    const float g_lead = fs_token_gumbel(gw, 0u, fs_group_lead(gw));
    const float lead_score = FS_FMA(lmax, w, g_lead);
    ASSERT_TRUE(fs_group_may_win(lmax, w, g_lead, lead_score)) << "a tie with the bound must pass";
    ASSERT_FALSE(fs_group_may_win(lmax, w, g_lead, std::nextafter(lead_score, INFINITY)));
    const float bound = lead_score + gap_d(rng);
    if (fs_group_may_win(lmax, w, g_lead, bound)) continue;
    ++ruled_out;
    for (int t = 0; t < 16; ++t) {  // every position, the lead's logit lmax or lower, a random own word
      const float l = t == fs_group_lead(gw) ? lmax : lmax - drop_d(rng);
      const float sc = FS_FMA(l, w, fs_token_gumbel(gw, fs_u32(rng()), t));
      ASSERT_LT(sc, bound) << "gw " << gw << " pos " << t << " lmax " << lmax << " 1/tau " << w;
    }
  }
  EXPECT_GT(ruled_out, 90000);
  // NaN in, may win (the caller's take-up never folds a NaN score).
  EXPECT_TRUE(fs_group_may_win(NAN, 1.0f, 3.0f, 10.0f));
  EXPECT_TRUE(fs_group_may_win(1.0f, 1.0f, 3.0f, NAN));
  EXPECT_TRUE(fs_group_may_win(INFINITY, 1.0f, 3.0f, INFINITY));  // an infinite logit ties an infinite bound
  EXPECT_FALSE(fs_group_may_win(5.0f, 1.0f, 3.0f, INFINITY));
}

// fs_group_may_win(lmax, 1/tau, G~, T(B)) (upper bound 1d, the register
// epilogue's test since session 43) false means no token of the group has an
// exact score reaching B, for any approximate lead noise G~ within
// FS_GUMBEL_APPROX_ERR of the exact one (the GPU tests GumbelBound.* check
// that the device's is). The extremes +-eps are tried for every group, and B
// at the lead's own score must pass (without the threshold's margin the low
// extreme would rule that group out). Random groups, temperatures, logits.
TEST(GumbelRace, GroupMayWinOnTheApproximateLeadAgainstTheThreshold) {
  std::mt19937_64 rng(20261128);
  std::uniform_real_distribution<float> l_d(-40.0f, 40.0f), gap_d(-0.5f, 12.0f), drop_d(0.0f, 3.0f),
      err_d(-FS_GUMBEL_APPROX_ERR, FS_GUMBEL_APPROX_ERR), near_d(-2e-3f, 2e-3f);
  const float inv_taus[] = {1.0f, 2.0f, 1.0f / 0.7f, 0.5f, 100.0f, 1.0f / 3.0f};
  int ruled_out = 0, near_ruled_out = 0;
  for (int i = 0; i < 100000; ++i) {
    const fs_u32 gw = fs_u32(rng());
    const float lmax = l_d(rng), w = inv_taus[i % 6];
    const float g_lead = fs_token_gumbel(gw, 0u, fs_group_lead(gw));
    const float lead_score = FS_FMA(lmax, w, g_lead);
    const float approx[] = {g_lead - FS_GUMBEL_APPROX_ERR, g_lead + FS_GUMBEL_APPROX_ERR, g_lead + err_d(rng)};
    for (const float g : approx)
      ASSERT_TRUE(fs_group_may_win(lmax, w, g, fs_prune_threshold(lead_score))) << "a tie with the bound must pass";
    // Every other group's bound sits within a few margins of the lead's own
    // score (T(B) is B less 2^-19 |B| + 4 eps): a margin below eps would rule
    // out a group whose lead reaches B.
    const float bound = i % 2 ? lead_score + gap_d(rng) : lead_score + near_d(rng) * (1.0f + std::fabs(lead_score));
    bool out = false;
    for (const float g : approx) out = out || !fs_group_may_win(lmax, w, g, fs_prune_threshold(bound));
    if (!out) continue;
    ++ruled_out;
    if (i % 2 == 0) ++near_ruled_out;
    for (int t = 0; t < 16; ++t) {  // every position, the lead's logit lmax or lower, a random own word
      const float l = t == fs_group_lead(gw) ? lmax : lmax - drop_d(rng);
      const float sc = FS_FMA(l, w, fs_token_gumbel(gw, fs_u32(rng()), t));
      ASSERT_LT(sc, bound) << "gw " << gw << " pos " << t << " lmax " << lmax << " 1/tau " << w;
    }
  }
  EXPECT_GT(ruled_out - near_ruled_out, 45000);
  EXPECT_GT(near_ruled_out, 5000);  // the near bounds do reach past the margin
  // NaN in, may win; an infinite bound's threshold is NaN (nothing ruled out).
  EXPECT_TRUE(fs_group_may_win(NAN, 1.0f, 3.0f, fs_prune_threshold(10.0f)));
  EXPECT_TRUE(fs_group_may_win(1.0f, 1.0f, 3.0f, fs_prune_threshold(NAN)));
  EXPECT_TRUE(fs_group_may_win(5.0f, 1.0f, 3.0f, fs_prune_threshold(INFINITY)));
  EXPECT_TRUE(fs_group_may_win(-5.0f, 1.0f, 3.0f, fs_prune_threshold(-INFINITY)));
}

TEST(GumbelRace, LeadPositionIsUniform) {
  std::vector<double> counts(16, 0.0);
  for (std::uint64_t v = 0; v < (1u << 24); v += 16) counts[std::size_t(fs_group_lead(fs_group_word(99, 5, v, 0)))] += 1;
  const std::vector<double> p(16, 1.0 / 16);
  EXPECT_LT(chi2(counts, p), chi2_critical_1e6(15));
}

// Every position's noise, lead or not, is a standard Gumbel: F(g) =
// exp(-exp(-g)) is uniform over 50 bins, for each of the 16 positions.
TEST(GumbelRace, EveryPositionIsStandardGumbel) {
  constexpr int kBins = 50;
  const std::vector<double> p(kBins, 1.0 / kBins);
  std::vector<std::vector<double>> counts(16, std::vector<double>(kBins, 0.0));
  for (std::uint64_t v = 0; v < (1u << 21); ++v) {
    const double g = fs_gumbel_noise(0x5eed, 17, v, 2);
    const double f = std::exp(-std::exp(-g));
    counts[v & 15][std::min(kBins - 1, int(f * kBins))] += 1;
  }
  for (int pos = 0; pos < 16; ++pos) EXPECT_LT(chi2(counts[std::size_t(pos)], p), chi2_critical_1e6(kBins - 1)) << pos;
}

// The race draws a group's 16 noise values from one group word and the
// tokens' own words; the claim that they are independent (not only each a
// standard Gumbel) is checked on pairs: F(g) of both tokens of a pair, over
// 2^20 draws (offsets), falls uniformly into a 10 x 10 grid. Pairs in one
// group (positions 0/1 and 4/6 of one Philox call, 3/12, 5/13: the same word of their calls,
// 7/15) and across a group edge (15/16). A pair that shared a word, or a
// lead that did not take the race's minimum, fails here.
TEST(GumbelRace, TokensOfAGroupAreIndependent) {
  constexpr int kBins = 10;
  const std::vector<double> p(kBins * kBins, 1.0 / (kBins * kBins));
  auto bin = [](float g) { return std::min(kBins - 1, int(std::exp(-std::exp(-double(g))) * kBins)); };
  for (const auto& [a, b] : {std::pair<std::uint64_t, std::uint64_t>{0, 1}, {4, 6}, {3, 12}, {5, 13}, {7, 15}, {15, 16}}) {
    std::vector<double> counts(kBins * kBins, 0.0);
    for (std::uint64_t draw = 0; draw < (1u << 20); ++draw)
      counts[std::size_t(bin(fs_gumbel_noise(0xfeed, draw, 64 + a, 1)) * kBins + bin(fs_gumbel_noise(0xfeed, draw, 64 + b, 1)))] += 1;
    EXPECT_LT(chi2(counts, p), chi2_critical_1e6(kBins * kBins - 1)) << "positions " << a << " and " << b;
  }
}

// Gumbel-max over 40 tokens v = 8 .. 47 (three groups, cut at both ends) with
// unequal probabilities samples softmax; so does a single group. 400,000
// draws each (offset = draw number).
TEST(GumbelRace, GumbelMaxSamplesSoftmaxInsideAndAcrossGroups) {
  for (const auto& [first, count] : {std::pair<int, int>{8, 40}, std::pair<int, int>{32, 16}}) {
    std::vector<double> logit(static_cast<std::size_t>(count)), p(static_cast<std::size_t>(count));
    double z = 0;
    for (int i = 0; i < count; ++i) z += p[std::size_t(i)] = std::exp(logit[std::size_t(i)] = 0.15 * ((i * 7) % 13));
    for (double& x : p) x /= z;
    std::vector<double> counts(static_cast<std::size_t>(count), 0.0);
    for (std::uint64_t draw = 0; draw < 400000; ++draw) {
      int best = 0;
      float bs = -INFINITY;
      for (int i = 0; i < count; ++i) {
        const float s = float(logit[std::size_t(i)]) + fs_gumbel_noise(42, draw, std::uint64_t(first + i), 0);
        if (s > bs) bs = s, best = i;
      }
      counts[std::size_t(best)] += 1;
    }
    EXPECT_LT(chi2(counts, p), chi2_critical_1e6(count - 1)) << "tokens " << first << " .. " << first + count - 1;
  }
}

}  // namespace
