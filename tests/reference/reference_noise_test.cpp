// reference_noise_test.cpp: the CPU reference sampler's noise: the Gumbel
// race of Philox words, the winner as the argmax of perturbed scores, and
// results that do not depend on a row's position in the batch.
//
// The inputs are hand-built (tests/support/reference_problem.hpp): with d = 8
// and hidden row n = e_c, logit_v = W[v][c] exactly (fp32 storage, one nonzero
// product), so every expectation below is computed here from the logits we
// chose, never taken from the sampler.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "fusedsample/errors.hpp"
#include "fusedsample/reference.hpp"
#include "templates/gumbel.cuh"
#include "templates/philox.cuh"
#include "tests/support/reference_problem.hpp"

namespace fs = fusedsample;

namespace {

using namespace fusedsample::testing::reference_tests;

// ------------------------------------------------------------------- noise

// The noise of gumbel_race.cuh: the group word (Philox counter word 0 =
// 2^31 | v >> 6, word (v >> 4) & 3) and the token's own word (counter v >> 2,
// word v & 3), spelled out here from the Philox primitive.
TEST(ReferenceNoise, GumbelIsTheGroupRaceOfPhiloxWords) {
  for (std::uint64_t seed : {0ull, 42ull, 0xdeadbeefcafef00dull})
    for (std::uint64_t offset : {0ull, 3ull, 1ull << 40})
      for (std::uint64_t v : {0ull, 1ull, 2ull, 3ull, 4ull, 5ull, 1023ull, 151935ull, (1ull << 33) + 6})
        for (std::uint32_t s : {0u, 1u, 5u}) {
          const fs_philox_ctr r = fs_noise_block(seed, offset, v, s);
          fs_philox_ctr gc;
          gc.v[0] = 0x80000000u | fs_u32(v >> 6);
          gc.v[1] = s;
          gc.v[2] = fs_u32(offset);
          gc.v[3] = fs_u32(offset >> 32);
          const fs_u32 gw = fs_philox4x32_10(gc, fs_u32(seed), fs_u32(seed >> 32)).v[(v >> 4) & 3];
          const float a = -fs_log(fs_uniform_from_bits(gw)) * 0.0625f;
          const float e = int(v & 15) == int(gw & 15) ? a : a + -fs_log(fs_uniform_from_bits(r.v[v & 3]));
          const float expected = -fs_log(e);
          EXPECT_EQ(fs::reference_gumbel(seed, offset, v, s), expected)
              << "seed " << seed << " offset " << offset << " v " << v << " sample " << s;
        }
}

// The winner is the argmax of logit / tau + reference_gumbel(seed, offset, v, s),
// recomputed here by brute force.
TEST(ReferenceNoise, WinnerIsArgmaxOfPerturbedScores) {
  const int V = 37;
  std::vector<float> logits(V);
  for (int v = 0; v < V; ++v) logits[std::size_t(v)] = float((v * 7) % 11) * 0.25f - 1.0f;
  Problem p(V);
  p.set_column(3, logits);
  const float taus[] = {0.5f, 1.0f, 2.0f};
  for (int i = 0; i < 3; ++i) p.add_row(3, taus[i], 1000 + i, 17 * i);
  const int S = 16;
  const auto r = p.run(S);
  for (int n = 0; n < 3; ++n)
    for (int s = 0; s < S; ++s) {
      double best = -INFINITY, second = -INFINITY;
      int bi = -1;
      for (int v = 0; v < V; ++v) {
        const double sc = double(logits[std::size_t(v)]) * double(1.0f / taus[n]) +
                          double(fs::reference_gumbel(p.params[std::size_t(n)].seed, p.params[std::size_t(n)].offset,
                                                      std::uint64_t(v), std::uint32_t(s)));
        if (sc > best) second = best, best = sc, bi = v;
        else if (sc > second) second = sc;
      }
      const auto& x = r[std::size_t(n * S + s)];
      EXPECT_EQ(x.index, bi) << "row " << n << " sample " << s;
      EXPECT_EQ(x.best, best);
      EXPECT_EQ(x.runner_up, second);
      EXPECT_GT(x.tolerance, 0.0);
      EXPECT_LT(x.tolerance, 1e-4);
    }
}

// Results depend on (seed, offset, v, sample) only, not on where the row sits
// in the batch: permuting rows (with their params) permutes the results.
TEST(ReferenceNoise, IndependentOfRowPosition) {
  const int V = 64, S = 5;
  Problem p(V);
  for (int c = 0; c < kD; ++c) {
    std::vector<float> col(V);
    for (int v = 0; v < V; ++v) col[std::size_t(v)] = std::sin(float(v * (c + 1))) * 2.0f;
    p.set_column(c, col);
  }
  struct Row {
    int c;
    float tau;
    std::uint64_t seed, offset;
  };
  const std::vector<Row> rows = {{0, 1.0f, 7, 0},  {1, 0.8f, 7, 1},  {2, 1.3f, 8, 0}, {3, 1.0f, 7, 0},
                                 {4, 0.0f, 9, 5},  {5, 0.5f, 1, 99}, {6, 2.0f, 2, 3}, {7, 1.0f, 3, 4},
                                 {0, 1.0f, 7, 0},  {0, 1.0f, 7, 1}};
  for (const Row& r : rows) p.add_row(r.c, r.tau, r.seed, r.offset);
  const auto base = p.run(S);

  std::vector<int> perm(rows.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::reverse(perm.begin(), perm.end());
  std::rotate(perm.begin(), perm.begin() + 3, perm.end());
  Problem q(V);
  q.W = p.W;
  for (int i : perm) q.add_row(rows[std::size_t(i)].c, rows[std::size_t(i)].tau, rows[std::size_t(i)].seed, rows[std::size_t(i)].offset);
  const auto permuted = q.run(S);
  for (std::size_t j = 0; j < perm.size(); ++j)
    for (int s = 0; s < S; ++s) {
      const auto& a = base[std::size_t(perm[j]) * S + s];
      const auto& b = permuted[j * S + s];
      EXPECT_EQ(a.index, b.index) << "row " << perm[j] << " moved to " << j << ", sample " << s;
      EXPECT_EQ(a.best, b.best);
    }
  // Identical rows (0 and 8) agree; a different offset (row 9) is different noise.
  for (int s = 0; s < S; ++s) EXPECT_EQ(base[0 * S + s].best, base[8 * S + s].best);
  int differ = 0;
  for (int s = 0; s < S; ++s) differ += base[0 * S + s].best != base[9 * S + s].best;
  EXPECT_GT(differ, 0);
  // Rows alone give the same answers as in the batch.
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Problem one(V);
    one.W = p.W;
    one.add_row(rows[i].c, rows[i].tau, rows[i].seed, rows[i].offset);
    const auto r = one.run(S);
    for (int s = 0; s < S; ++s) EXPECT_EQ(r[std::size_t(s)].index, base[i * S + s].index);
  }
}

}  // namespace
