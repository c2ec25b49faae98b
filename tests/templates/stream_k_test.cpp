// stream_k_test.cpp: the host build of templates/stream_k.cuh, the schedule
// of wgmma_coop "sk" specs. Over all blocks, every k-step of every tile must
// be computed exactly once; a tile is cut at most once, into a head (the
// last unit of block b) and a tail (the first stream-K unit of block b - 1,
// whose slot the head reads); every block runs the same number of k-steps
// within one tile's worth; and without a partial wave every tile is whole.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "templates/stream_k.cuh"

namespace {

struct Walk {
  std::vector<fs_sk_unit> units;
  fs_i64 ksteps = 0;
};

// Block b's walk (the kernels' fs_sk_walk).
Walk walk(const fs_sk_schedule& s, int b) {
  Walk w;
  fs_sk_walk at = fs_sk_walk_start(s, b);
  fs_sk_unit u;
  while (fs_sk_walk_next(at, u)) {
    w.units.push_back(u);
    w.ksteps += u.k1 - u.k0;
  }
  return w;
}

// Block b's units from the schedule's definition (stream_k.cuh's header), in
// 64-bit arithmetic: its whole tiles b, b + B, ... below T_dp, then its
// stream-K range [begin(r), begin(r + 1)) (r = B - 1 - b) cut where tiles end.
std::vector<fs_sk_unit> defined_units(const fs_sk_schedule& s, int b) {
  std::vector<fs_sk_unit> units;
  for (fs_i64 t = b; t < s.dp_tiles; t += s.blocks) units.push_back({int(t), 0, s.ktiles});
  const fs_i64 dp = s.dp_tiles * s.ktiles, cut = s.sk_tiles * s.ktiles, r = s.blocks - 1 - b;
  const fs_i64 end = dp + cut * (r + 1) / s.blocks;
  for (fs_i64 k = dp + cut * r / s.blocks; k < end;) {
    const fs_i64 t = k / s.ktiles, next = std::min((t + 1) * s.ktiles, end);
    units.push_back({int(t), int(k - t * s.ktiles), int(next - t * s.ktiles)});
    k = next;
  }
  return units;
}

// Block b's walk is its defined units, in order (stops at the first difference).
void expect_defined_walk(const fs_sk_schedule& s, int b) {
  const std::vector<fs_sk_unit> expected = defined_units(s, b);
  const Walk w = walk(s, b);
  ASSERT_EQ(w.units.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(w.units[i].tile, expected[i].tile) << "unit " << i;
    ASSERT_EQ(w.units[i].k0, expected[i].k0) << "unit " << i;
    ASSERT_EQ(w.units[i].k1, expected[i].k1) << "unit " << i;
  }
}

void check_schedule(fs_i64 tiles, int ktiles, int blocks) {
  SCOPED_TRACE(testing::Message() << "tiles " << tiles << " ktiles " << ktiles << " blocks " << blocks);
  const fs_sk_schedule s = fs_sk_make(tiles, ktiles, blocks);
  std::vector<std::vector<int>> covered(std::size_t(tiles), std::vector<int>(std::size_t(ktiles), 0));
  std::map<fs_i64, int> head_block, tail_block;  // tile -> block
  fs_i64 most = 0, least = tiles * ktiles;
  for (int b = 0; b < blocks; ++b) {
    const Walk w = walk(s, b);
    most = std::max(most, w.ksteps);
    least = std::min(least, w.ksteps);
    for (std::size_t i = 0; i < w.units.size(); ++i) {
      const fs_sk_unit& u = w.units[i];
      ASSERT_GE(u.tile, 0);
      ASSERT_LT(u.tile, tiles);
      ASSERT_GE(u.k0, 0);
      ASSERT_LT(u.k0, u.k1) << "empty unit";
      ASSERT_LE(u.k1, ktiles);
      for (int k = u.k0; k < u.k1; ++k) ++covered[std::size_t(u.tile)][std::size_t(k)];
      EXPECT_FALSE(u.k0 > 0 && u.k1 < ktiles) << "a tile cut twice (tile " << u.tile << ")";
      if (fs_sk_is_tail(u)) {
        EXPECT_EQ(u.k1, ktiles);
        tail_block[u.tile] = b;
        // The tail is the block's first stream-K unit: nothing cut comes before it.
        for (std::size_t k = 0; k < i; ++k) EXPECT_LT(w.units[k].tile, s.dp_tiles) << "block " << b;
      }
      if (fs_sk_is_head(u, ktiles)) {
        head_block[u.tile] = b;
        EXPECT_EQ(i + 1, w.units.size()) << "a head is the block's last unit (block " << b << ")";
      }
    }
  }
  for (fs_i64 t = 0; t < tiles; ++t)
    for (int k = 0; k < ktiles; ++k) ASSERT_EQ(covered[std::size_t(t)][std::size_t(k)], 1) << "tile " << t << " k " << k;
  // Every head has its tail in the next lower block (its slot), and the reverse.
  EXPECT_EQ(head_block.size(), tail_block.size());
  for (const auto& [tile, b] : head_block) {
    ASSERT_TRUE(tail_block.count(tile)) << "tile " << tile;
    EXPECT_EQ(tail_block[tile], b - 1) << "tile " << tile;
  }
  if (tiles % blocks == 0 || tiles <= blocks) {
    EXPECT_TRUE(head_block.empty()) << "whole waves need no cut";
    EXPECT_EQ(s.sk_tiles, 0);
  } else {
    // Balanced: no block runs a whole tile's k-steps more than another, and
    // the blocks differ by at most one k-step in the stream-K part.
    EXPECT_LE(most - least, 1);
    EXPECT_GT(s.sk_tiles, blocks);
    EXPECT_LT(s.sk_tiles, 2 * fs_i64(blocks));
  }
}

TEST(StreamK, EveryKStepOnceAndEachTileCutAtMostOnce) {
  for (int blocks : {1, 2, 3, 7, 132})
    for (fs_i64 tiles : {1, 2, 5, 131, 132, 133, 264, 300, 1002, 2004})
      for (int ktiles : {1, 2, 9, 64, 128}) check_schedule(tiles, ktiles, blocks);
}

// The 32-bit walk (producer and consumers) yields the units the schedule
// defines, in the same order.
TEST(StreamK, WalkYieldsTheDefinedUnits) {
  for (int blocks : {1, 2, 3, 7, 132})
    for (fs_i64 tiles : {1, 2, 5, 131, 133, 264, 300, 501, 1002})
      for (int ktiles : {1, 2, 9, 64, 128}) {
        const fs_sk_schedule s = fs_sk_make(tiles, ktiles, blocks);
        for (int b = 0; b < blocks; ++b) {
          SCOPED_TRACE(testing::Message() << "tiles " << tiles << " ktiles " << ktiles << " blocks " << blocks
                                          << " block " << b);
          expect_defined_walk(s, b);
        }
      }
}

// The 32-bit walk at the sampler's limit (T K just below 2^31, every tile
// whole: T a multiple of B): after a block's last whole tile its next
// position would pass 2^31; the walk must stop there, not wrap.
TEST(StreamK, WalkStopsAtTheLimit) {
  const fs_i64 tiles = 132LL * 254200;  // T K = 2147481600 < 2^31 - 1 with K = 64
  const fs_sk_schedule s = fs_sk_make(tiles, 64, 132);
  ASSERT_LT(tiles * 64, 0x7fffffffLL);
  for (int b : {0, 31, 32, 131}) {
    fs_sk_walk w = fs_sk_walk_start(s, b);
    fs_sk_unit u;
    fs_i64 units = 0, last = -1;
    while (fs_sk_walk_next(w, u) && units <= 254200) {
      ASSERT_GE(u.tile, 0) << "block " << b << " unit " << units;
      ASSERT_LT(u.tile, tiles) << "block " << b << " unit " << units;
      last = u.tile;
      ++units;
    }
    EXPECT_EQ(units, 254200) << "block " << b;
    EXPECT_EQ(last, tiles - 132 + b) << "block " << b;
  }
}

// The stream-K part at the sampler's limit: one tile fewer than whole
// waves (T K = 2147481536 < 2^31 - 1 with K = 64), so the last 1.99 waves are
// cut; the walk of the first, second and last block yields the defined units.
TEST(StreamK, WalkCutsTheLastWavesAtTheLimit) {
  const fs_i64 tiles = 132LL * 254200 - 1;
  const fs_sk_schedule s = fs_sk_make(tiles, 64, 132);
  ASSERT_LT(tiles * 64, 0x7fffffffLL);
  ASSERT_GT(s.sk_tiles, 132);
  for (int b : {0, 1, 131}) {
    SCOPED_TRACE(testing::Message() << "block " << b);
    expect_defined_walk(s, b);
    EXPECT_GE(walk(s, b).units.back().tile, tiles - 2 * 132) << "the block's last unit is in the cut waves";
  }
}

// The large shape at N = 128 on 132 blocks: 1002 tiles of 128 k-steps.
// Plain round-robin runs 8 tiles on some blocks (7.59 on average); here every
// block runs 7.59 tiles' k-steps, the last 1.59 waves cut along the depth.
TEST(StreamK, LargeShapeBalancesTheLastWaves) {
  const fs_sk_schedule s = fs_sk_make(1002, 128, 132);
  EXPECT_EQ(s.dp_tiles, 6 * 132);
  EXPECT_EQ(s.sk_tiles, 1002 - 6 * 132);
  for (int b : {0, 1, 65, 131}) {
    const Walk w = walk(s, b);
    EXPECT_GE(w.ksteps, 1002 * 128 / 132) << "block " << b;
    EXPECT_LE(w.ksteps, 1002 * 128 / 132 + 1) << "block " << b;
  }
}

}  // namespace
