// default_spec_test.cpp: fitting a spec to a GPU's shared memory
// (fit_shared_memory, compiler/default_spec.cpp), which the defaults and the
// runtime's spec choice go through, and a register-epilogue spec's batch tile
// to the batch (fit_batch_tile).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "tests/support/kernel_spec_checks.hpp"

namespace fs = fusedsample;

namespace {

using namespace fusedsample::testing::kernel_spec_tests;

constexpr std::size_t k99KiB = 101376;  // sm_86, sm_89 and sm_120 GPUs (L4, L40S, RTX 4090, RTX 5090)

TEST(FitSharedMemory, SpecThatFitsIsUnchanged) {
  const KernelSpec s = KernelSpec::parse("bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 re");
  EXPECT_EQ(fs::fit_shared_memory(s, fs::shared_memory_limit(Arch::sm_90a)), s);
  const KernelSpec m = KernelSpec::parse("bf16 sm_90 mma_sync tv64 tn8 td128 s4 w4x1");  // 75904 bytes
  EXPECT_EQ(fs::fit_shared_memory(m, k99KiB), m);
}

// An H200 table entry (108672 bytes) on a GPU newer than Hopper with 99 KiB:
// the same tile, its stages shallower (td128 -> td64) and, up to the bytes in
// flight it had, more of them (s3 -> s5); not a smaller batch tile.
TEST(FitSharedMemory, SameTileShallowerStages) {
  const KernelSpec s = KernelSpec::parse("bf16 sm_90 mma_sync tv128 tn8 td128 s3 w4x1");
  ASSERT_GT(s.shared_bytes(), k99KiB);
  const KernelSpec f = fs::fit_shared_memory(s, k99KiB);
  EXPECT_LE(f.shared_bytes(), k99KiB);
  EXPECT_NO_THROW(f.validate());
  EXPECT_EQ(f.tile_v, 128);
  EXPECT_EQ(f.tile_n, 8);
  EXPECT_EQ(f.variant, Variant::mma_sync);
  EXPECT_EQ(f.to_string(), "bf16 sm_90 mma_sync tv128 tn8 td64 s5 w4x1") << "deepest stages, then the most of them";
}

// Two stages only where no deeper pipeline of the same batch tile fits, and
// a narrower batch tile only where no depth does.
TEST(FitSharedMemory, BatchTileLast) {
  const KernelSpec s = KernelSpec::parse("bf16 sm_80 mma_sync tv128 tn64 td64 s3 w4x2");  // 107520 bytes
  const KernelSpec f = fs::fit_shared_memory(s, k99KiB);
  EXPECT_EQ(f.tile_n, 64);
  EXPECT_GE(f.stages, 3);
  EXPECT_LE(f.shared_bytes(), k99KiB);
  // 48 KiB: the 64-row tile's staged logits alone take 33792 bytes.
  const KernelSpec g = fs::fit_shared_memory(s, 48 * 1024);
  EXPECT_LE(g.shared_bytes(), 48u * 1024);
  EXPECT_NO_THROW(g.validate());
}

TEST(FitSharedMemory, NothingFitsNamesTheSpecAndTheLimit) {
  const KernelSpec s = KernelSpec::parse("bf16 sm_90 mma_sync tv128 tn64 td64 s3 w4x2");
  expect_error<fs::Unsupported>([&] { fs::fit_shared_memory(s, 4096); }, {"tv128 tn64 td64 s3", "4096", "107520"},
                                "4 KiB");
}

// A register-epilogue spec whose one batch tile covers the batch gets the
// batch rounded up to 8 rows, at least 64: the H200 table's bucket 192
// (tn192) at N = 161..168 runs tn168, not 192 rows (session 65), its bucket
// 128 (tv256 tn128) at N = 65..72 tn72 (session 66).
TEST(FitBatchTile, RegisterEpilogueTileShrinksToTheRowsRoundedUpTo8) {
  const KernelSpec s = KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn192 td64 s4 w12x1 sk re");
  for (std::int64_t rows : {161, 162, 167, 168}) EXPECT_EQ(fs::fit_batch_tile(s, rows).tile_n, 168) << rows;
  EXPECT_EQ(fs::fit_batch_tile(s, 169).tile_n, 176);
  EXPECT_EQ(fs::fit_batch_tile(s, 185).tile_n, 192);
  EXPECT_EQ(fs::fit_batch_tile(s, 192), s);
  EXPECT_EQ(fs::fit_batch_tile(s, 130).tile_n, 136);
  EXPECT_EQ(fs::fit_batch_tile(s, 128).tile_n, 128);
  EXPECT_EQ(fs::fit_batch_tile(s, 100).tile_n, 104);
  EXPECT_EQ(fs::fit_batch_tile(s, 65).tile_n, 72);
  // Never below 64 (re's narrowest tile), and everything else of the spec kept.
  for (std::int64_t rows : {1, 33, 64}) EXPECT_EQ(fs::fit_batch_tile(s, rows).tile_n, 64) << rows;
  const KernelSpec table128 = KernelSpec::parse("bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 re");
  KernelSpec want72 = table128;
  want72.tile_n = 72;
  EXPECT_EQ(fs::fit_batch_tile(table128, 70), want72);
  for (std::int64_t rows : {128, 129, 200}) EXPECT_EQ(fs::fit_batch_tile(table128, rows), table128) << rows;
  KernelSpec want = s;
  want.tile_n = 152;
  EXPECT_EQ(fs::fit_batch_tile(s, 150), want);
  for (std::int64_t rows = 1; rows <= 192; ++rows) EXPECT_NO_THROW(fs::fit_batch_tile(s, rows).validate()) << rows;
}

// Other specs run as they are: a tile that does not cover the batch (several
// batch tiles: the small shape's N = 256 in 2 x 128), no register epilogue, a
// cluster (its H slices are cut from the tuned tile), ping-pong (128 x 128
// tiles only), and tiles already at 64.
TEST(FitBatchTile, OtherSpecsUnchanged) {
  for (const char* text : {"bf16 sm_90a wgmma_coop tv256 tn64 td64 s4 w12x1 re",
                           "bf16 sm_90a wgmma_coop tv128 tn128 td64 s6 w12x1 re pp",
                           "bf16 sm_90a wgmma_coop tv128 tn256 td64 s4 w12x1 l2",
                           "bf16 sm_90a wgmma_coop tv128 tn192 td64 s3 w12x1 c2 re",
                           "bf16 sm_90a wgmma tv256 tn128 td64 s3 w8x1", "bf16 sm_90 mma_sync tv128 tn64 td64 s3 w4x2"}) {
    const KernelSpec s = KernelSpec::parse(text);
    for (std::int64_t rows : {1, 100, 129, 200, 256, 300}) EXPECT_EQ(fs::fit_batch_tile(s, rows), s) << text << " " << rows;
  }
  const KernelSpec wide = KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn256 td64 s4 w12x1 sk re");
  EXPECT_EQ(fs::fit_batch_tile(wide, 257), wide) << "more rows than the tile: several tiles";
  EXPECT_EQ(fs::fit_batch_tile(wide, 250).tile_n, 256);
  EXPECT_EQ(fs::fit_batch_tile(wide, 225).tile_n, 232);
}

TEST(FitBatchTile, RowsBelowOneAreRejected) {
  const KernelSpec s = KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn192 td64 s4 w12x1 re");
  for (std::int64_t rows : {0, -1}) expect_error<fs::InvalidArgument>([&] { fs::fit_batch_tile(s, rows); }, {"rows"}, "rows < 1");
}

// The bucket below's one re tile grown to a batch nearer it: the H200's
// small-shape bucket 224 winner at N = 225-240 (session 65). Never past 256
// rows, never a spec that would not be valid (tv256: more than 128
// accumulators), never other specs.
TEST(GrowBatchTile, RegisterEpilogueTileGrowsToTheRowsRoundedUpTo8) {
  const KernelSpec s = KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn224 td64 s4 w12x1 re");
  for (std::int64_t rows : {225, 231, 232}) {
    const auto g = fs::grow_batch_tile(s, rows);
    ASSERT_TRUE(g.has_value()) << rows;
    KernelSpec want = s;
    want.tile_n = 232;
    EXPECT_EQ(*g, want) << rows;
  }
  EXPECT_EQ(fs::grow_batch_tile(s, 256)->tile_n, 256);
  for (std::int64_t rows : {1, 200, 224, 257})
    EXPECT_FALSE(fs::grow_batch_tile(s, rows).has_value()) << rows;
  for (const char* text : {"bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 re",
                           "bf16 sm_90a wgmma_coop tv128 tn128 td64 s6 w12x1 re pp",
                           "bf16 sm_90a wgmma_coop tv128 tn192 td64 s3 w12x1 c2 re",
                           "bf16 sm_90a wgmma_coop tv128 tn128 td64 s4 w16x1", "bf16 sm_90a wgmma tv256 tn128 td64 s3 w8x1"})
    EXPECT_FALSE(fs::grow_batch_tile(KernelSpec::parse(text), 200).has_value()) << text;
  for (std::int64_t rows : {0, -1})
    expect_error<fs::InvalidArgument>([&] { fs::grow_batch_tile(s, rows); }, {"rows"}, "rows < 1");
  // Deeper stages that no longer fit in shared memory with the wider tile: nothing.
  const KernelSpec deep = KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn160 td64 s5 w12x1 re");
  EXPECT_TRUE(fs::grow_batch_tile(deep, 176).has_value());
  EXPECT_FALSE(fs::grow_batch_tile(deep, 256).has_value());
}

}  // namespace
