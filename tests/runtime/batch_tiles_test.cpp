// batch_tiles_test.cpp: the module slots and the config a batch part runs
// (runtime/batch_tiles.hpp), on tables of the tests' own. No GPU needed.
#include "runtime/batch_tiles.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>

#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "fusedsample/tuning_db.hpp"

namespace fs = fusedsample;
namespace rt = fusedsample::runtime;
using fs::KernelSpec;

namespace {

constexpr std::size_t kHopperShared = 227 * 1024;

// Every part of 1..256 rows has a slot inside its own bucket, the slot's rows
// cover the part, and a slot's parts are contiguous: parts 65..72 slot 7, ...,
// 249..256 slot 30; the midpoints between the buckets above 128 end slots.
TEST(ModuleSlots, EachSlotIsContiguousInsideOneBucketAndCoversItsParts) {
  int last = -1;
  for (std::int64_t p = 1; p <= 256; ++p) {
    const int k = rt::module_slot(p);
    ASSERT_GE(k, last) << p;
    ASSERT_LT(k, rt::kModuleSlots);
    last = k;
    EXPECT_GE(rt::slot_rows(k), p) << p;
    EXPECT_EQ(fs::batch_bucket(rt::slot_rows(k)), fs::batch_bucket(p)) << p;
    if (p > 64) EXPECT_EQ(rt::slot_rows(k), (p + 7) / 8 * 8) << p;
    if (p <= 64) EXPECT_EQ(k, fs::batch_bucket(p)) << p;
  }
  EXPECT_EQ(last, rt::kModuleSlots - 1);
  EXPECT_EQ(rt::module_slot(65), rt::kFittedFirstSlot);
  EXPECT_EQ(rt::module_slot(64), fs::batch_bucket(64));
  EXPECT_EQ(rt::module_slot(64) + 1, rt::kFittedFirstSlot);
  EXPECT_EQ(rt::module_slot(129), rt::module_slot(128) + 1);
  for (std::int64_t mid : {144, 176, 208, 240}) EXPECT_NE(rt::module_slot(mid), rt::module_slot(mid + 1)) << mid;
  EXPECT_THROW(rt::module_slot(0), fs::InvalidArgument);
  EXPECT_THROW(rt::module_slot(257), fs::InvalidArgument);
  EXPECT_THROW(rt::slot_rows(rt::kModuleSlots), fs::InvalidArgument);
  EXPECT_THROW(rt::slot_rows(-1), fs::InvalidArgument);
}

// A table like the H200's small shape (BENCHMARKS.md session 65).
std::map<std::int64_t, KernelSpec> small_shape_table() {
  return {{128, KernelSpec::parse("bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 re")},
          {160, KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn160 td64 s5 w12x1 re")},
          {192, KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn192 td64 s4 w12x1 re l2p0")},
          {224, KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn224 td64 s4 w12x1 re")},
          {256, KernelSpec::parse("bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 re")}};
}

KernelSpec with_tile_n(KernelSpec s, int tn) {
  s.tile_n = tn;
  return s;
}

TEST(BatchSpec, FitsTheBucketWinnerOrGrowsTheOneBelow) {
  const auto table = small_shape_table();
  std::map<std::int64_t, int> asked;
  const auto lookup = [&](std::int64_t rows) {  // the buckets up to 128 all answer the 128's winner
    ++asked[rows];
    return table.at(std::max<std::int64_t>(rows, 128));
  };
  const auto spec = [&](std::int64_t part) { return rt::batch_spec(part, lookup, kHopperShared); };
  // Fitted: the bucket's own winner, its tile the part rounded up to 8.
  EXPECT_EQ(spec(129), with_tile_n(table.at(160), 136));
  EXPECT_EQ(spec(160), table.at(160));
  EXPECT_EQ(spec(162), with_tile_n(table.at(192), 168)) << "nearer 160, but 192's winner can be fitted";
  EXPECT_EQ(spec(200), with_tile_n(table.at(224), 200));
  // Grown: bucket 256's winner is two 128-row tiles; 225..240 are nearer 224, whose one tile grows.
  EXPECT_EQ(spec(225), with_tile_n(table.at(224), 232));
  EXPECT_EQ(spec(240), with_tile_n(table.at(224), 240));
  EXPECT_EQ(spec(241), table.at(256));
  EXPECT_EQ(spec(256), table.at(256));
  // 65..128 rows (session 66): bucket 128's winner fitted; up to 64 rows the bucket's winner as it is.
  EXPECT_EQ(spec(65), with_tile_n(table.at(128), 72));
  EXPECT_EQ(spec(100), with_tile_n(table.at(128), 104));
  EXPECT_EQ(spec(128), table.at(128));
  for (std::int64_t p : {1, 3, 64}) EXPECT_EQ(spec(p), table.at(128)) << p;
  EXPECT_EQ(asked.count(256), 1u);
}

// The bucket below grows only into shared memory the GPU has, and only a one-tile
// register-epilogue winner; a winner wider than its own bucket runs as tuned.
TEST(BatchSpec, GrowsOnlyWhatFitsAndNeverRefitsAWiderWinner) {
  auto table = small_shape_table();
  const auto lookup = [&](std::int64_t rows) { return table.at(rows); };
  const KernelSpec grown = with_tile_n(table.at(224), 232);
  EXPECT_EQ(rt::batch_spec(230, lookup, grown.shared_bytes()), grown);
  EXPECT_EQ(rt::batch_spec(230, lookup, grown.shared_bytes() - 1), table.at(256)) << "too little shared memory";
  table[224] = KernelSpec::parse("bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 re");  // two tiles below too
  EXPECT_EQ(rt::batch_spec(230, lookup, kHopperShared), table.at(256));
  // The tuner kept tn256 for the bucket 224 over the fitted tn224: N = 200..224 run it as tuned.
  table[224] = KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn256 td64 s4 w12x1 sk re");
  for (std::int64_t p : {200, 224}) EXPECT_EQ(rt::batch_spec(p, lookup, kHopperShared), table.at(224)) << p;
  // A bucket 256 winner of one 256-row tile is fitted, never replaced by the bucket below.
  table[256] = KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn256 td64 s4 w12x1 sk re");
  EXPECT_EQ(rt::batch_spec(230, lookup, kHopperShared), with_tile_n(table.at(256), 232));
}

}  // namespace
