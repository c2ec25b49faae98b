// candidate_key_test.cpp: the host build of templates/fs_params.cuh's
// candidate packing. The fused kernel folds every tile's winner into one
// 64-bit atomic max, so the packed keys' unsigned order must be exactly
// fs_better's order (higher score, ties to the lower index), including the
// corner cases: -0 == +0, infinities, denormals, the largest index.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "templates/fs_params.cuh"

namespace {

struct Candidate {
  float score;
  int index;
};

std::vector<float> special_scores() {
  const float inf = std::numeric_limits<float>::infinity();
  const float den = std::numeric_limits<float>::denorm_min();
  const float big = std::numeric_limits<float>::max();
  return {-inf, -big, -1.5f, -1.0f, -den, -0.0f, 0.0f, den, 1e-30f, 1.0f, 1.5f, 16.6356f, big, inf};
}

TEST(CandidateKey, UnsignedOrderIsFsBetterOnEveryPair) {
  std::vector<Candidate> cs;
  for (float s : special_scores())
    for (int v : {0, 1, 7, 151935, 0x7ffffffe, FS_NO_INDEX}) cs.push_back({s, v});
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-40.0f, 40.0f);
  std::uniform_int_distribution<int> iv(0, 300000);
  for (int i = 0; i < 200; ++i) cs.push_back({u(rng), iv(rng)});
  // Exact score ties with different indices: the tie rule must decide.
  for (int i = 0; i < 20; ++i) cs.push_back({cs[std::size_t(200 + i)].score, iv(rng)});
  for (const Candidate& a : cs)
    for (const Candidate& b : cs) {
      const bool better = fs_better(a.score, a.index, b.score, b.index);
      const bool key_better = fs_pack_candidate(a.score, a.index) > fs_pack_candidate(b.score, b.index);
      ASSERT_EQ(better, key_better) << "(" << a.score << ", " << a.index << ") vs (" << b.score << ", " << b.index
                                    << ")";
    }
}

TEST(CandidateKey, SignedZerosAreOneScore) {
  // fs_better calls -0 and +0 equal, so the lower index wins either way.
  EXPECT_GT(fs_pack_candidate(-0.0f, 3), fs_pack_candidate(0.0f, 5));
  EXPECT_GT(fs_pack_candidate(0.0f, 3), fs_pack_candidate(-0.0f, 5));
  EXPECT_EQ(fs_pack_candidate(-0.0f, 4), fs_pack_candidate(0.0f, 4));
}

TEST(CandidateKey, ZeroKeyIsBelowEveryCandidateAndIndexRoundTrips) {
  for (float s : special_scores())
    for (int v : {0, 1, 123456, 0x7ffffffe, FS_NO_INDEX}) {
      const fs_u64 k = fs_pack_candidate(s, v);
      EXPECT_GT(k, 0ull) << s << " " << v;
      EXPECT_EQ(fs_candidate_index(k), v);
    }
}

// Splitting candidates into tiles in any order and taking the max key gives
// the sequential fs_better scan's winner (what the old two-pass reduction
// computed), so the tile order of the atomics cannot change a sample.
TEST(CandidateKey, MaxOfKeysOverAnyTilingIsTheSequentialWinner) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> level(-3, 3);  // few distinct scores: many ties
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Candidate> cs(1000);
    for (std::size_t i = 0; i < cs.size(); ++i) cs[i] = {level(rng) * 0.5f, int(i)};
    if (trial % 3 == 0) cs[std::size_t(rng() % cs.size())].score = -0.0f;
    Candidate seq{-std::numeric_limits<float>::infinity(), FS_NO_INDEX};
    for (const Candidate& c : cs)
      if (fs_better(c.score, c.index, seq.score, seq.index)) seq = c;
    std::shuffle(cs.begin(), cs.end(), rng);
    fs_u64 best = 0;
    for (const Candidate& c : cs) best = std::max(best, fs_pack_candidate(c.score, c.index));
    EXPECT_EQ(fs_candidate_index(best), seq.index);
  }
}

// The epilogue reads the best key so far as a lower bound on the row's final
// score (docs/rng.md §6), so decoding must give the packed score exactly
// (-0 as +0) and key 0 must decode to NaN ("no bound").
TEST(CandidateKey, ScoreRoundTripsAndEmptyKeyIsNaN) {
  std::vector<float> scores = special_scores();
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> u(-1e6f, 1e6f);
  for (int i = 0; i < 10000; ++i) scores.push_back(u(rng));
  for (float s : scores) {
    const float back = fs_candidate_score(fs_pack_candidate(s, 42));
    const float want = s == 0.0f ? 0.0f : s;
    EXPECT_EQ(fs_float_bits(back), fs_float_bits(want)) << s;
  }
  EXPECT_TRUE(std::isnan(fs_candidate_score(0)));
  EXPECT_EQ(std::fmax(fs_candidate_score(0), -std::numeric_limits<float>::infinity()),
            -std::numeric_limits<float>::infinity());
}

}  // namespace
