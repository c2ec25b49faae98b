// search_space_test.cpp: the tuner's candidate enumeration (autotune/
// search_space.cpp): default first, everything valid and within the shared
// memory limit and the tile_n bounds, bounded, deterministic.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

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

TEST(SearchSpace, DefaultFitsEveryArchitecture) {
  for (DType d : kDTypes)
    for (Arch a : kArchs)
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

// The config that runs now is always measured by a re-tune, right after the
// default, even where the cost model ranks it out; never twice, and never when
// it cannot run here.
TEST(SearchSpace, TheIncumbentIsAlwaysACandidate) {
  const auto parse = [](const char* t) { return fs::KernelSpec::parse(t); };
  fs::SearchSpaceOptions o;
  o.max_candidates = 24;
  const fs::KernelSpec poor = parse("bf16 sm_90 mma_sync tv32 tn8 td32 s2 w1x1");
  const auto plain = fs::search_space(DType::bf16, Arch::sm_90, 256, o);
  ASSERT_EQ(std::count(plain.begin(), plain.end(), poor), 0);  // ranked out
  o.incumbent = poor;
  const auto with = fs::search_space(DType::bf16, Arch::sm_90, 256, o);
  ASSERT_GE(with.size(), 2u);
  EXPECT_LE(with.size(), 24u);
  EXPECT_EQ(with[0], fs::default_spec(DType::bf16, Arch::sm_90, 256));
  EXPECT_EQ(with[1], poor);
  std::set<std::string> names;
  for (const auto& s : with) EXPECT_TRUE(names.insert(s.to_string()).second) << "twice: " << s.to_string();
  // A ranked incumbent is not offered twice either.
  o.incumbent = plain[3];
  const auto again = fs::search_space(DType::bf16, Arch::sm_90, 256, o);
  EXPECT_EQ(again[1], plain[3]);
  EXPECT_EQ(std::count(again.begin(), again.end(), plain[3]), 1);
  // The default as incumbent changes nothing.
  o.incumbent = plain[0];
  EXPECT_EQ(fs::search_space(DType::bf16, Arch::sm_90, 256, o), plain);
  // Another dtype, an sm_90a-only variant on sm_80, or too much shared memory: left out.
  o.incumbent = parse("fp16 sm_90 mma_sync tv32 tn8 td32 s2 w1x1");
  const auto other_dtype = fs::search_space(DType::bf16, Arch::sm_90, 256, o);
  EXPECT_EQ(std::count(other_dtype.begin(), other_dtype.end(), *o.incumbent), 0);
  o.incumbent = parse("bf16 sm_90a wgmma_coop tv128 tn128 td64 s4 w20x1");
  for (const auto& s : fs::search_space(DType::bf16, Arch::sm_80, 256, o)) EXPECT_NE(s.variant, fs::Variant::wgmma_coop);
  o.max_shared_bytes = 64 * 1024;
  for (const auto& s : fs::search_space(DType::bf16, Arch::sm_90, 256, o)) EXPECT_NE(s, *o.incumbent);
}

// wgmma_coop's warp counts differ only in epilogue warps: more of them rank
// first (w20x1, the measured winner at N = 128-256, used to lose a tie to the
// spec strings' order).
TEST(SearchSpace, CoopCostPrefersMoreEpilogueWarps) {
  const std::size_t limit = fs::shared_memory_limit(Arch::sm_90a);
  auto cost = [&](const char* t) { return fs::estimated_cost(fs::KernelSpec::parse(t), 256, limit); };
  EXPECT_LT(cost("bf16 sm_90a wgmma_coop tv128 tn128 td64 s4 w20x1"), cost("bf16 sm_90a wgmma_coop tv128 tn128 td64 s4 w16x1"));
  EXPECT_LT(cost("bf16 sm_90a wgmma_coop tv128 tn128 td64 s4 w16x1"), cost("bf16 sm_90a wgmma_coop tv128 tn128 td64 s4 w12x1"));
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

// wgmma_coop's register epilogue ("re", and "re pp" at T_V = 128) is searched
// where its tile fits the batch (T_N = 128: from 64 rows up), within the
// default cap, and never on parts without wgmma. Never with T_N < 128, which
// re takes since session 66 for the Sampler's fitted tiles only: 3e75f57 let
// 46 tn64 re specs into the full grid and 4 into the default cap at 64 rows.
TEST(SearchSpace, OffersTheRegisterEpilogueForLargeBatches) {
  auto count = [](const std::vector<fs::KernelSpec>& specs, bool pp) {
    return std::count_if(specs.begin(), specs.end(), [&](const fs::KernelSpec& s) {
      return s.reg_epilogue && s.ping_pong == pp && s.tile_n == 128 && s.warps_m == 12;
    });
  };
  for (std::int64_t rows : {128, 256}) {
    const auto specs = fs::search_space(DType::bf16, Arch::sm_90, rows);  // the tuner's default cap
    EXPECT_GE(count(specs, false), 1) << rows;
    for (const auto& s : specs) EXPECT_NO_THROW(s.validate()) << s.to_string();
  }
  fs::SearchSpaceOptions all;
  all.max_candidates = 100000;
  EXPECT_GE(count(fs::search_space(DType::bf16, Arch::sm_90, 256, all), true), 1);
  EXPECT_EQ(count(fs::search_space(DType::bf16, Arch::sm_90, 32, all), false), 0);  // T_N <= 64 there
  for (std::int64_t rows : {32, 64, 128})
    for (const auto& s : fs::search_space(DType::bf16, Arch::sm_90, rows, all))
      EXPECT_FALSE(s.reg_epilogue && s.tile_n < 128) << s.to_string() << " at " << rows << " rows";
  EXPECT_EQ(count(fs::search_space(DType::bf16, Arch::sm_80, 256, all), false), 0);
  // Costed as w20x1 (same MMAs, no epilogue warps' share to wait for).
  const std::size_t limit = fs::shared_memory_limit(Arch::sm_90a);
  auto cost = [&](const char* t) { return fs::estimated_cost(fs::KernelSpec::parse(t), 256, limit); };
  EXPECT_LT(cost("bf16 sm_90a wgmma_coop tv128 tn128 td64 s4 w12x1 re"),
            cost("bf16 sm_90a wgmma_coop tv128 tn128 td64 s4 w12x1"));
}

// Several samples per row: no ping-pong (`re pp`) in the grid, nor as the
// incumbent (its time at S = 4 moved by up to 1.5 x between runs, session
// 38); an explicit extra still runs. One sample per row keeps it, and a
// sample count below 1 is refused.
TEST(SearchSpace, LeavesOutPingPongForSeveralSamples) {
  auto pp_count = [](const std::vector<fs::KernelSpec>& specs) {
    return std::count_if(specs.begin(), specs.end(), [](const fs::KernelSpec& s) { return s.ping_pong; });
  };
  const auto pp = fs::KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn128 td64 s6 w12x1 re pp l2p0");
  fs::SearchSpaceOptions o;
  o.max_candidates = 100000;
  o.incumbent = pp;
  const auto one = fs::search_space(DType::bf16, Arch::sm_90, 128, o);
  EXPECT_GE(pp_count(one), 2);
  EXPECT_EQ(one[1], pp);  // the incumbent, right after the default
  o.samples = 4;
  const auto four = fs::search_space(DType::bf16, Arch::sm_90, 128, o);
  EXPECT_EQ(pp_count(four), 0);
  EXPECT_LT(four.size(), one.size());
  for (const auto& s : one)
    if (!s.ping_pong) EXPECT_EQ(std::count(four.begin(), four.end(), s), 1) << s.to_string();
  o.extra = {pp};
  const auto asked = fs::search_space(DType::bf16, Arch::sm_90, 128, o);
  EXPECT_EQ(pp_count(asked), 1);
  EXPECT_EQ(asked[1], pp);
  o.samples = 0;
  EXPECT_THROW(fs::search_space(DType::bf16, Arch::sm_90, 128, o), fs::InvalidArgument);
}

// The TMA-fed variants are also searched without L2 promotion (a family of
// their own in the cap's first pass, so the default cap holds some at every
// batch size on Hopper); every other variant keeps the default 256.
TEST(SearchSpace, OffersTheTmaVariantsWithoutL2Promotion) {
  for (std::int64_t rows : {1, 16, 64, 256}) {
    const auto specs = fs::search_space(DType::bf16, Arch::sm_90, rows);
    const auto promoted = std::count_if(specs.begin(), specs.end(), [](const fs::KernelSpec& s) {
      return s.l2_promotion == 0 && fs::uses_tma(s.variant);
    });
    EXPECT_GE(promoted, 1) << rows;
    for (const auto& s : specs) {
      EXPECT_TRUE(s.l2_promotion == 256 || s.l2_promotion == 0) << s.to_string();
      if (!fs::uses_tma(s.variant)) EXPECT_EQ(s.l2_promotion, 256) << s.to_string();
    }
  }
  fs::SearchSpaceOptions all;
  all.max_candidates = 100000;
  for (const auto& s : fs::search_space(DType::bf16, Arch::sm_80, 16, all)) EXPECT_EQ(s.l2_promotion, 256);
}

// Extra specs (fusedsample tune --also) come right after the default and the
// incumbent, once each, where they fit the rows' batch tile bounds, the arch
// and the shared memory limit; they count toward the cap.
TEST(SearchSpace, ExtraSpecsAreCandidatesWhereTheyFit) {
  fs::SearchSpaceOptions o;
  o.max_candidates = 6;
  const auto c2 = fs::KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn64 td128 s4 w16x1 c2 l2p0");
  const auto tn8 = fs::KernelSpec::parse("bf16 sm_90 mma_sync tv64 tn8 td128 s3 w4x1");
  const auto fp16 = fs::KernelSpec::parse("fp16 sm_90 mma_sync tv64 tn8 td128 s3 w4x1");
  o.extra = {c2, tn8, c2, fp16};
  const auto at64 = fs::search_space(DType::bf16, Arch::sm_90, 64, o);
  ASSERT_EQ(at64.size(), 6u);
  EXPECT_EQ(at64[1], c2);  // in the order given, once
  EXPECT_EQ(at64[2], tn8);  // T_N = 8 is within 64 rows' bounds (8..128)
  EXPECT_EQ(std::count(at64.begin(), at64.end(), c2), 1);
  EXPECT_EQ(std::count(at64.begin(), at64.end(), fp16), 0);  // another dtype
  const auto at1 = fs::search_space(DType::bf16, Arch::sm_90, 1, o);  // T_N = 64 is above 1 row's bound (8)
  EXPECT_EQ(std::count(at1.begin(), at1.end(), c2), 0);
  EXPECT_EQ(at1[1], tn8);
  const auto on_a100 = fs::search_space(DType::bf16, Arch::sm_80, 64, o);  // no wgmma there
  EXPECT_EQ(std::count(on_a100.begin(), on_a100.end(), c2), 0);
  o.max_candidates = 1;
  EXPECT_EQ(fs::search_space(DType::bf16, Arch::sm_90, 64, o).size(), 1u);
}

// Stream-K twins (sk) of the register-epilogue specs, where the launch's last
// wave of tiles is at most 80 % full on one block per multiprocessor: the
// large shape at N = 256 (1002 tiles of 128 x 256 on 132: 7.59 waves) gets
// them, the small shape (1187 tiles: 8.99 waves) and an unknown shape do not;
// never a twin of `pp`, and each twin validates.
TEST(SearchSpace, OffersStreamKTwinsWhereTheLastWaveIsUnderfull) {
  const auto tn256 = fs::KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn256 td64 s4 w12x1 re");
  EXPECT_TRUE(fs::last_wave_underfull(tn256, 128256, 256, 132));    // 1002 tiles: 78 in the last wave
  EXPECT_FALSE(fs::last_wave_underfull(tn256, 151936, 256, 132));   // 1187: 131 of 132
  EXPECT_FALSE(fs::last_wave_underfull(tn256, 132 * 128, 256, 132));  // one wave: no more tiles than blocks
  EXPECT_FALSE(fs::last_wave_underfull(tn256, 264 * 128, 256, 132));  // whole waves
  EXPECT_FALSE(fs::last_wave_underfull(tn256, 100 * 128, 256, 132));  // fewer tiles than blocks
  EXPECT_FALSE(fs::last_wave_underfull(tn256, 128256, 256, 0));     // unknown GPU
  EXPECT_TRUE(fs::last_wave_underfull(tn256, 128 * (132 + 105), 256, 132));   // 105 = 0.795 of 132
  EXPECT_FALSE(fs::last_wave_underfull(tn256, 128 * (132 + 106), 256, 132));  // 106 = 0.803

  fs::SearchSpaceOptions all;
  all.max_candidates = 100000;
  auto twins = [](const std::vector<fs::KernelSpec>& specs) {
    return std::count_if(specs.begin(), specs.end(), [](const fs::KernelSpec& s) { return s.stream_k; });
  };
  EXPECT_EQ(twins(fs::search_space(DType::bf16, Arch::sm_90, 256, all)), 0);  // no shape given
  all.multiprocessors = 132;
  all.vocab = 128256;
  const auto large = fs::search_space(DType::bf16, Arch::sm_90, 256, all);
  EXPECT_GE(twins(large), 1);
  for (const auto& s : large)
    if (s.stream_k) {
      EXPECT_TRUE(s.reg_epilogue && !s.ping_pong && s.l2_promotion == 256) << s.to_string();
      EXPECT_TRUE(fs::last_wave_underfull(s, all.vocab, 256, 132)) << s.to_string();
      EXPECT_NO_THROW(s.validate()) << s.to_string();
      fs::KernelSpec plain = s;
      plain.stream_k = false;
      EXPECT_NE(std::find(large.begin(), large.end(), plain), large.end()) << "twin without its spec: " << s.to_string();
    }
  EXPECT_NE(std::find(large.begin(), large.end(), fs::KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn256 td64 s4 w12x1 sk re")),
            large.end());
  all.vocab = 151936;
  const auto small = fs::search_space(DType::bf16, Arch::sm_90, 256, all);
  for (const auto& s : small)
    if (s.stream_k) EXPECT_TRUE(fs::last_wave_underfull(s, all.vocab, 256, 132)) << s.to_string();
  EXPECT_EQ(std::count(small.begin(), small.end(),
                       fs::KernelSpec::parse("bf16 sm_90a wgmma_coop tv128 tn256 td64 s4 w12x1 sk re")),
            0);
  // The tuner's default cap of 24 keeps some twins at the large shape's N = 256 (their own family).
  fs::SearchSpaceOptions capped;
  capped.vocab = 128256;
  capped.multiprocessors = 132;
  EXPECT_GE(twins(fs::search_space(DType::bf16, Arch::sm_90, 256, capped)), 1);
}

// Eager-release twins (er) of the bandwidth-bound cooperative specs (T_N <=
// 64, staged epilogue, l2p0), each beside its spec, at any N whose batch
// tiles include them; the default cap keeps some at N = 16 and 64; never
// where there is no TMA.
TEST(SearchSpace, OffersEagerReleaseTwinsOfTheBandwidthBoundTiles) {
  fs::SearchSpaceOptions all;
  all.max_candidates = 100000;
  auto twins = [](const std::vector<fs::KernelSpec>& specs) {
    return std::count_if(specs.begin(), specs.end(), [](const fs::KernelSpec& s) { return s.eager_release; });
  };
  for (std::int64_t rows : {16, 64, 256}) {
    const auto specs = fs::search_space(DType::bf16, Arch::sm_90, rows, all);
    EXPECT_GE(twins(specs), 1) << rows;
    for (const auto& s : specs)
      if (s.eager_release) {
        EXPECT_TRUE(s.variant == fs::Variant::wgmma_coop && !s.reg_epilogue && s.tile_n <= 64 && s.l2_promotion == 0)
            << s.to_string();
        EXPECT_NO_THROW(s.validate()) << s.to_string();
        fs::KernelSpec plain = s;
        plain.eager_release = false;
        EXPECT_NE(std::find(specs.begin(), specs.end(), plain), specs.end()) << "twin without its spec: " << s.to_string();
      }
  }
  for (std::int64_t rows : {16, 64})
    EXPECT_GE(twins(fs::search_space(DType::bf16, Arch::sm_90, rows, fs::SearchSpaceOptions{})), 1) << rows;
  EXPECT_EQ(twins(fs::search_space(DType::bf16, Arch::sm_80, 64, all)), 0);  // no TMA there
}

// Between 128 and 256 rows (the buckets 160, 192, 224) the tuner also tries
// the batch tile fitted to the rows: with the register epilogue, T_N = rows;
// the tuner's default cap of 24 keeps it, and it ranks before the 256-column
// tile (fewer MMAs on rows past N). At 128 and 256 rows nothing new.
TEST(SearchSpace, OffersBatchTilesFittedToTheRowsBetweenBuckets) {
  const fs::SearchSpaceOptions capped;  // 24 candidates
  for (int rows : {160, 192, 224}) {
    SCOPED_TRACE(rows);
    const auto specs = fs::search_space(DType::bf16, Arch::sm_90, rows, capped);
    const auto fitted = std::find_if(specs.begin(), specs.end(), [&](const fs::KernelSpec& s) {
      return s.variant == fs::Variant::wgmma_coop && s.reg_epilogue && s.tile_n == rows;
    });
    ASSERT_NE(fitted, specs.end());
    EXPECT_NO_THROW(fitted->validate());
    fs::KernelSpec wide = *fitted;
    wide.tile_n = 256;
    EXPECT_LT(fs::estimated_cost(*fitted, rows, 0), fs::estimated_cost(wide, rows, 0)) << fitted->to_string();
  }
  // Other rows: the rows rounded up to 8 (fit_batch_tile's tiles; 32 until session 65).
  for (int rows : {162, 200}) {
    const auto specs = fs::search_space(DType::bf16, Arch::sm_90, rows, capped);
    EXPECT_TRUE(std::any_of(specs.begin(), specs.end(), [&](const fs::KernelSpec& s) {
      return s.reg_epilogue && s.tile_n == (rows + 7) / 8 * 8;
    })) << rows;
  }
  fs::SearchSpaceOptions all;
  all.max_candidates = 100000;
  for (int rows : {128, 256})
    for (const auto& s : fs::search_space(DType::bf16, Arch::sm_90, rows, all))
      EXPECT_TRUE(s.tile_n == 8 || s.tile_n == 16 || s.tile_n == 32 || s.tile_n == 64 || s.tile_n == 128 ||
                  s.tile_n == 256)
          << s.to_string();
}
