// search_space_test.cpp: the tuner's candidate enumeration (autotune/
// search_space.cpp): default first, everything valid and within the shared
// memory limit and the tile_n bounds, bounded, deterministic.
#include <gtest/gtest.h>

#include <set>

#include "fusedsample/errors.hpp"
#include "fusedsample/tuner.hpp"

namespace fs = fusedsample;
using fs::Arch;
using fs::DType;

namespace {

const DType kDTypes[] = {DType::bf16, DType::fp16, DType::fp32};
const Arch kArchs[] = {Arch::sm_80, Arch::sm_86, Arch::sm_89, Arch::sm_90};

std::string label(DType d, Arch a, std::int64_t rows) {
  return std::string(fs::to_string(d)) + " " + std::string(fs::to_string(a)) + " rows " + std::to_string(rows);
}

}  // namespace

TEST(SearchSpace, DefaultFirstAllValidBoundedWithinLimits) {
  for (DType d : kDTypes)
    for (Arch a : kArchs)
      for (int b = 0; b < fs::kNumBatchBuckets; ++b) {
        const std::int64_t rows = fs::bucket_rows(b);
        SCOPED_TRACE(label(d, a, rows));
        const auto specs = fs::search_space(d, a, rows);
        ASSERT_FALSE(specs.empty());
        ASSERT_LE(specs.size(), 24u);
        EXPECT_EQ(specs[0], fs::default_spec(d, a, rows));
        EXPECT_GT(specs.size(), 1u) << "only the default survived the pruning";
        std::set<std::string> seen;
        for (std::size_t i = 0; i < specs.size(); ++i) {
          const fs::KernelSpec& s = specs[i];
          EXPECT_NO_THROW(s.validate()) << s.to_string();
          EXPECT_TRUE(seen.insert(s.to_string()).second) << "duplicate " << s.to_string();
          EXPECT_EQ(s.dtype, d);
          EXPECT_NE(s.variant, fs::Variant::logits);
          EXPECT_EQ(s.arch, fs::target_arch(s.variant, a)) << s.to_string();
          if (i == 0) continue;  // the default is the baseline, exempt from pruning
          EXPECT_LE(s.shared_bytes(), fs::shared_memory_limit(a)) << s.to_string();
          EXPECT_GE(s.tile_n, fs::min_tile_n(rows)) << s.to_string();
          EXPECT_LE(s.tile_n, fs::max_tile_n(rows)) << s.to_string();
        }
      }
}

TEST(SearchSpace, DefaultFitsTheArchitecturesWithLargeSharedMemory) {
  for (DType d : kDTypes)
    for (Arch a : {Arch::sm_80, Arch::sm_90})
      for (int b = 0; b < fs::kNumBatchBuckets; ++b)
        EXPECT_LE(fs::search_space(d, a, fs::bucket_rows(b))[0].shared_bytes(), fs::shared_memory_limit(a));
}

TEST(SearchSpace, SharedMemoryLimitIsAParameter) {
  fs::SearchSpaceOptions o;
  o.max_shared_bytes = 48 * 1024;
  o.max_candidates = 1000;
  const auto specs = fs::search_space(DType::bf16, Arch::sm_90, 16, o);
  ASSERT_GT(specs.size(), 1u);
  for (std::size_t i = 1; i < specs.size(); ++i) EXPECT_LE(specs[i].shared_bytes(), o.max_shared_bytes);
  EXPECT_EQ(fs::shared_memory_limit(Arch::sm_90), 227u * 1024);
  EXPECT_EQ(fs::shared_memory_limit(Arch::sm_80), 163u * 1024);
}

TEST(SearchSpace, CapIsRespectedAndKeepsTheDefault) {
  for (int cap : {1, 2, 5, 24, 100}) {
    fs::SearchSpaceOptions o;
    o.max_candidates = cap;
    const auto specs = fs::search_space(DType::bf16, Arch::sm_90, 8, o);
    EXPECT_LE(specs.size(), std::size_t(cap));
    ASSERT_FALSE(specs.empty());
    EXPECT_EQ(specs[0], fs::default_spec(DType::bf16, Arch::sm_90, 8));
  }
  fs::SearchSpaceOptions bad;
  bad.max_candidates = 0;
  EXPECT_THROW(fs::search_space(DType::bf16, Arch::sm_90, 8, bad), fs::InvalidArgument);
  EXPECT_THROW(fs::search_space(DType::bf16, Arch::sm_90, 0), fs::InvalidArgument);
}

TEST(SearchSpace, IsDeterministicAndRankedByCostAfterTheDefault) {
  fs::SearchSpaceOptions o;
  o.max_candidates = 50;
  const auto a = fs::search_space(DType::fp16, Arch::sm_90, 64, o);
  const auto b = fs::search_space(DType::fp16, Arch::sm_90, 64, o);
  EXPECT_EQ(a, b);
  // The first pass (two per tile family) is in cost order.
  const std::size_t limit = fs::shared_memory_limit(Arch::sm_90);
  EXPECT_LE(fs::estimated_cost(a[1], 64, limit), fs::estimated_cost(a[2], 64, limit));
}

TEST(SearchSpace, TileNBoundsFollowTheBatch) {
  EXPECT_EQ(fs::max_tile_n(1), 8);
  EXPECT_EQ(fs::max_tile_n(4), 8);
  EXPECT_EQ(fs::max_tile_n(8), 16);
  EXPECT_EQ(fs::max_tile_n(256), 256);
  EXPECT_EQ(fs::max_tile_n(512), 256);
  EXPECT_EQ(fs::min_tile_n(1), 8);
  EXPECT_EQ(fs::min_tile_n(64), 8);
  EXPECT_EQ(fs::min_tile_n(128), 16);
  EXPECT_EQ(fs::min_tile_n(256), 32);
  EXPECT_EQ(fs::min_tile_n(512), 32);
}

TEST(SearchSpace, CostPrefersFewerPassesOverWForLargeBatches) {
  fs::KernelSpec small = fs::default_spec(DType::bf16, Arch::sm_90, 8);  // tn8
  fs::KernelSpec big = fs::default_spec(DType::bf16, Arch::sm_90, 64);   // tn64
  const std::size_t limit = fs::shared_memory_limit(Arch::sm_90);
  EXPECT_LT(fs::estimated_cost(big, 256, limit), fs::estimated_cost(small, 256, limit));
}

TEST(SearchSpace, OffersEveryFusedVariantThatBuildsOnTheArch) {
  fs::SearchSpaceOptions o;
  o.max_candidates = 100000;
  std::set<fs::Variant> variants;
  for (const auto& s : fs::search_space(DType::bf16, Arch::sm_90, 16, o)) variants.insert(s.variant);
  EXPECT_TRUE(variants.count(fs::Variant::mma_sync));
  EXPECT_FALSE(variants.count(fs::Variant::simt));  // fp32 only
  variants.clear();
  for (const auto& s : fs::search_space(DType::fp32, Arch::sm_80, 16, o)) variants.insert(s.variant);
  EXPECT_EQ(variants, std::set<fs::Variant>{fs::Variant::simt});
}
