// cluster_tiles_test.cpp: the host build of templates/cluster_tiles.cuh, the
// mapping from a cluster's groups to its blocks' tiles that both the
// wgmma_coop kernel and the launch (runtime/sampler.cpp) use. Over all groups
// and ranks, every tile of the launch must be computed exactly once, the
// blocks of a group must share the operand their cluster multicasts (one
// vocabulary tile when sharing W, one batch tile when sharing H), and only
// tiles past the vocabulary may be left over.
#include <gtest/gtest.h>

#include <algorithm>

#include <map>
#include <utility>

#include "templates/cluster_tiles.cuh"
#include "templates/tma_boxes.cuh"

namespace {

void check_cover(fs_i64 vtiles, fs_i64 ntiles, int cluster) {
  SCOPED_TRACE(testing::Message() << "vtiles " << vtiles << " ntiles " << ntiles << " cluster " << cluster);
  std::map<std::pair<fs_i64, fs_i64>, int> seen;
  const fs_i64 groups = fs_cluster_groups(vtiles, ntiles, cluster);
  fs_i64 empty = 0;
  for (fs_i64 g = 0; g < groups; ++g) {
    const fs_tile_ref r0 = fs_cluster_tile(g, 0, ntiles, cluster);
    for (int r = 0; r < cluster; ++r) {
      const fs_tile_ref t = fs_cluster_tile(g, r, ntiles, cluster);
      ASSERT_GE(t.ntile, 0);
      ASSERT_LT(t.ntile, ntiles);
      ASSERT_GE(t.vtile, 0);
      if (fs_cluster_shares_w(ntiles, cluster)) EXPECT_EQ(t.vtile, r0.vtile) << "group " << g << " rank " << r;
      else EXPECT_EQ(t.ntile, r0.ntile) << "group " << g << " rank " << r;
      if (t.vtile >= vtiles) {
        ++empty;
        continue;
      }
      ++seen[{t.vtile, t.ntile}];
    }
  }
  EXPECT_EQ(fs_i64(seen.size()), vtiles * ntiles);
  for (const auto& [tile, n] : seen) EXPECT_EQ(n, 1) << "tile (" << tile.first << ", " << tile.second << ")";
  // Empty tiles only pad the last vocabulary tiles of a shared-H group.
  EXPECT_LT(empty, fs_i64(cluster) * ntiles);
  if (cluster == 1 || fs_cluster_shares_w(ntiles, cluster)) EXPECT_EQ(empty, 0);
}

TEST(ClusterTiles, EveryTileExactlyOnce) {
  for (int cluster : {1, 2, 4})
    for (fs_i64 vtiles : {1, 2, 3, 5, 8, 1187})
      for (fs_i64 ntiles : {1, 2, 3, 4, 8}) check_cover(vtiles, ntiles, cluster);
}

TEST(ClusterTiles, SharedOperandChoice) {
  EXPECT_FALSE(fs_cluster_shares_w(2, 1));
  EXPECT_TRUE(fs_cluster_shares_w(2, 2));   // N = 256, T_N = 128: the two blocks share W
  EXPECT_FALSE(fs_cluster_shares_w(1, 2));  // N <= T_N: consecutive vocabulary tiles share H
  EXPECT_FALSE(fs_cluster_shares_w(6, 4));
  EXPECT_TRUE(fs_cluster_shares_w(8, 4));
  // A cluster of one is the plain persistent order: tile = vtile * ntiles + ntile.
  for (fs_i64 g = 0; g < 12; ++g) {
    const fs_tile_ref t = fs_cluster_tile(g, 0, 3, 1);
    EXPECT_EQ(t.vtile * 3 + t.ntile, g);
  }
  EXPECT_EQ(fs_cluster_groups(1187, 1, 2), 594);
  EXPECT_EQ(fs_cluster_groups(1187, 2, 2), 1187);
}

// The shared operand's box is copied in slices of whole 8-row swizzle atoms,
// one per block, or whole by rank 0; the launch's tensor maps use those rows
// (tma_boxes.cuh), and boxes 64 columns wide (32 for T_d = 32).
TEST(ClusterTiles, SharedBoxSlices) {
  EXPECT_EQ(fs_cluster_slices(128, 1), 1);
  EXPECT_EQ(fs_cluster_slices(128, 2), 2);
  EXPECT_EQ(fs_cluster_slices(32, 4), 4);   // 8-row slices
  EXPECT_EQ(fs_cluster_slices(8, 2), 1);    // 4 rows would split a swizzle atom
  EXPECT_EQ(fs_cluster_slices(40, 2), 1);   // 20 rows: not whole atoms
  EXPECT_EQ(fs_cluster_slices(48, 2), 2);
  EXPECT_EQ(fs_cluster_slices(16, 4), 1);
  EXPECT_EQ(fs_tma_box_rows(128, true, 2), 64);
  EXPECT_EQ(fs_tma_box_rows(128, false, 2), 128);  // the block's own operand: the whole tile
  EXPECT_EQ(fs_tma_box_rows(8, true, 2), 8);
  EXPECT_EQ(fs_tma_box_rows(256, true, 4), 64);
  EXPECT_EQ(fs_tma_box_rows(64, true, 1), 64);
  // H's box without a cluster: a batch of fewer rows than one tile copies only its rows (whole 8-row atoms), so
  // no box reaches far past the tensor (the copy engine's fill of those rows was slow, session 34).
  EXPECT_EQ(fs_tma_h_box_rows(129, 160, 1), 136);
  EXPECT_EQ(fs_tma_h_box_rows(1, 8, 1), 8);
  EXPECT_EQ(fs_tma_h_box_rows(96, 256, 1), 96);
  EXPECT_EQ(fs_tma_h_box_rows(160, 160, 1), 160);  // a whole tile
  EXPECT_EQ(fs_tma_h_box_rows(300, 256, 1), 256);  // several batch tiles: whole tiles
  EXPECT_EQ(fs_tma_h_box_rows(100, 128, 2), 128);  // clusters: the tile (or its slice, fs_tma_box_rows)
  for (int tn = 8; tn <= 256; tn += 8)
    for (long long n = 1; n <= 300; ++n) {
      const int r = fs_tma_h_box_rows(n, tn, 1);
      EXPECT_TRUE(r % 8 == 0 && r <= tn && r >= std::min<long long>(n, tn)) << n << " " << tn;
    }
  // The tail map's box (the last batch tile): its rows inside the batch, whole 8-row atoms (session 35: N = 300 in
  // tiles of 160 copied 160 rows for the last tile's 140).
  EXPECT_EQ(fs_tma_h_tail_rows(300, 160, 1), 144);
  EXPECT_EQ(fs_tma_h_tail_rows(257, 256, 1), 8);
  EXPECT_EQ(fs_tma_h_tail_rows(512, 256, 1), 256);  // a whole last tile: the head map's box
  EXPECT_EQ(fs_tma_h_tail_rows(96, 256, 1), 96);    // one tile: the head map's box
  EXPECT_EQ(fs_tma_h_tail_rows(300, 128, 2), 128);  // clusters: the head map's box
  for (int tn = 8; tn <= 256; tn += 8)
    for (long long n = 1; n <= 700; ++n) {
      const int r = fs_tma_h_tail_rows(n, tn, 1);
      const long long last = n - (n - 1) / tn * tn;  // rows of the last tile
      EXPECT_TRUE(r % 8 == 0 && r <= tn && r >= last && r < last + 8) << n << " " << tn;
      if (n <= tn) EXPECT_EQ(r, fs_tma_h_box_rows(n, tn, 1)) << n << " " << tn;
    }
  EXPECT_EQ(fs_tma_box_cols(32), 32);
  EXPECT_EQ(fs_tma_box_cols(64), 64);
  EXPECT_EQ(fs_tma_box_cols(128), 64);  // two boxes side by side
  // Every slice is whole atoms and the slices tile the box.
  for (int cluster : {1, 2, 4})
    for (int rows = 8; rows <= 256; rows += 8) {
      const int s = fs_cluster_slices(rows, cluster);
      EXPECT_TRUE(s == 1 || s == cluster);
      EXPECT_EQ(rows % s, 0);
      EXPECT_EQ((rows / s) % 8, 0) << rows << " rows, cluster " << cluster;
    }
}

}  // namespace
