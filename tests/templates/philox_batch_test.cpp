// philox_batch_test.cpp: the host build of templates/philox_batch.cuh. The
// epilogue of wgmma_coop draws its noise words with fs_philox_blocks (the
// first rounds' row constants precomputed, G groups at a time); they must be
// the words of the noise contract, fs_noise_block, for every seed, offset,
// sample and group, including 32-bit wrap-around of the group counter.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "templates/gumbel_race.cuh"
#include "templates/philox_batch.cuh"

namespace {

template <int G, int S = 1>
void expect_same_words(fs_u64 seed, fs_u64 offset, fs_u32 sample, fs_u32 x0) {
  const fs_philox_row row = fs_philox_row_init(seed, offset, sample);
  fs_philox_ctr got[G];
  fs_philox_blocks<G, S>(row, x0, got);
  for (int j = 0; j < G; ++j) {
    const fs_u32 x = x0 + (fs_u32)(S * j);
    const fs_philox_ctr want = fs_noise_block(seed, offset, 4 * (fs_u64)x, sample);
    for (int w = 0; w < 4; ++w)
      ASSERT_EQ(got[j].v[w], want.v[w]) << "seed " << seed << " offset " << offset << " sample " << sample
                                        << " group " << x << " word " << w << " (G = " << G << ", S = " << S << ")";
  }
}

TEST(PhiloxBatch, SameWordsAsTheNoiseContract) {
  std::mt19937_64 rng(20261121);
  for (int t = 0; t < 2000; ++t) {
    const fs_u64 seed = rng(), offset = rng();
    const fs_u32 sample = (fs_u32)(rng() % 8), x0 = (fs_u32)rng();
    expect_same_words<1>(seed, offset, sample, x0);
    expect_same_words<2>(seed, offset, sample, x0);
    expect_same_words<4>(seed, offset, sample, x0);
    expect_same_words<2, 2>(seed, offset, sample, x0);  // a take-up's tokens v and v + 8
  }
}

TEST(PhiloxBatch, EdgeValues) {
  const fs_u64 edges[] = {0ull, 1ull, 0xffffffffull, 0x100000000ull, ~0ull};
  for (fs_u64 seed : edges)
    for (fs_u64 offset : edges)
      for (fs_u32 sample : {0u, 1u, 0xffffffffu})
        for (fs_u32 x0 : {0u, 1u, 0xfffffffdu, 0xffffffffu}) {
          expect_same_words<4>(seed, offset, sample, x0);
          expect_same_words<2, 2>(seed, offset, sample, x0);
        }
}

// The register epilogue's take-up: a lane holds tokens v and v + 8 of a
// 16-token group (v = 16 k + r, r < 8) and makes both blocks with one
// stride-2 call from v / 4: they must be the contract's blocks of v and v + 8.
TEST(PhiloxBatch, TakeUpTokensVAndVPlus8) {
  std::mt19937_64 rng(46);
  for (int t = 0; t < 2000; ++t) {
    const fs_u64 seed = rng(), offset = rng();
    const fs_u32 sample = (fs_u32)(rng() % 8);
    const int v = 16 * (int)(rng() % (1u << 26)) + (int)(rng() % 8);
    fs_philox_ctr got[2];
    fs_philox_blocks<2, 2>(fs_philox_row_init(seed, offset, sample), (fs_u32)(v >> 2), got);
    for (int h = 0; h < 2; ++h) {
      const fs_philox_ctr want = fs_noise_block(seed, offset, (fs_u64)(v + 8 * h), sample);
      for (int w = 0; w < 4; ++w) ASSERT_EQ(got[h].v[w], want.v[w]) << "v " << v << " token " << h << " word " << w;
    }
  }
}

// The coop epilogue takes the group words of gumbel_race.cuh from the row's
// constants too (counter word 0 with its top bit set).
TEST(PhiloxBatch, GroupWordsFromTheRowConstants) {
  std::mt19937_64 rng(7);
  for (int t = 0; t < 2000; ++t) {
    const fs_u64 seed = rng(), offset = rng(), v = rng() % (1ull << 31);
    const fs_u32 sample = (fs_u32)(rng() % 8);
    fs_philox_ctr got[1];
    fs_philox_blocks<1>(fs_philox_row_init(seed, offset, sample), fs_group_ctr(v), got);
    const int i = fs_group_slot(v);
    ASSERT_EQ(got[0].v[i], fs_group_word(seed, offset, v, sample)) << "v " << v;
  }
}

}  // namespace
