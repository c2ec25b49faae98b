// score_ties_test.cpp: the tie rule at the rate it acts (docs/rng.md section
// 9). Two tokens of equal logit l draw the contract's noise (fs_gumbel_noise)
// and are scored as the kernels score them, FS_FMA(l, 1/tau, g), the winner by
// fs_better (higher score, then lower index). Where ulp(l / tau) is 1/8 the
// two rounded scores tie with probability ulp * integral of the Gumbel
// density squared = 1/32, and the lower index takes every tie: 1/2 + 1/64 of
// the wins. Where the ulp is 2^-19 or finer it is 1/2. A rule that gave ties
// to the higher index (1/2 - 1/64), broke them by noise position, or treated
// scores one ulp apart as tied (about 1/2 + 3/64) fails here; the chi-squared
// tests cannot see any of these (their scores tie about once in 10^7 draws).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "templates/fs_params.cuh"
#include "templates/gumbel_race.cuh"

namespace {

struct TieCounts {
  double lower_wins = 0, ties = 0, draws = 0;
};

// 2^20 draws (offsets) of the pair (v, v + gap) at logit l, temperature 1.
TieCounts count_pair(float l, std::uint64_t v, std::uint64_t gap) {
  TieCounts c;
  const std::uint64_t seed = 0x5eed71e5u;
  for (std::uint64_t offset = 0; offset < (1u << 20); ++offset) {
    const float a = FS_FMA(l, 1.0f, fs_gumbel_noise(seed, offset, v, 0));
    const float b = FS_FMA(l, 1.0f, fs_gumbel_noise(seed, offset, v + gap, 0));
    c.ties += a == b;
    c.lower_wins += fs_better(a, int(v), b, int(v + gap));
    c.draws += 1;
  }
  return c;
}

// Pairs inside one group (the lead's race couples their words) and across a
// group edge, each at |l| / tau in [2^20, 2^21) (ulp 1/8; l = 1.5 * 2^20 keeps
// every score l + g, g in [-2.87, 19.41], inside that binade) and at l = 1.5.
TEST(ScoreTies, RoundedTiesGoToTheLowerIndexAtTheDocumentedRate) {
  struct Pair {
    std::uint64_t v, gap;
  };
  for (const Pair pr : {Pair{0, 1}, Pair{5, 9}, Pair{15, 1}, Pair{1000, 37}}) {
    SCOPED_TRACE("tokens " + std::to_string(pr.v) + " and " + std::to_string(pr.v + pr.gap));
    const TieCounts coarse = count_pair(1.5f * 1048576.0f, pr.v, pr.gap);
    const double n = coarse.draws, p_tie = 1.0 / 32, p_low = 0.5 + p_tie / 2;
    EXPECT_NEAR(coarse.ties / n, p_tie, 5 * std::sqrt(p_tie * (1 - p_tie) / n)) << "tie rate at ulp 1/8";
    EXPECT_NEAR(coarse.lower_wins / n, p_low, 5 * std::sqrt(0.25 / n)) << "lower index's share at ulp 1/8";

    const TieCounts fine = count_pair(1.5f, pr.v, pr.gap);
    EXPECT_LE(fine.ties, 20.0) << "ties at l = 1.5 (ulp <= 2^-19: about 0.5 expected)";
    EXPECT_NEAR(fine.lower_wins / fine.draws, 0.5, 5 * std::sqrt(0.25 / fine.draws)) << "lower index's share at l = 1.5";
  }
}

}  // namespace
