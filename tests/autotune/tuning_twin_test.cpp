// tuning_twin_test.cpp: a dtype without tuned entries takes its twin's
// (fp16 <-> bf16) at each lookup level, before the next level; fp32 has none.
// Before session 36 an fp16 head on an H100/H200 ran default_spec(): the
// built-in tables hold bf16 only.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "fusedsample/compiler.hpp"
#include "fusedsample/tuning_db.hpp"
#include "tests/support/tuning_fixtures.hpp"

namespace fs = fusedsample;
using fs::Arch;
using fs::DType;
using fs::MatchLevel;
using fs::testing::kH100;
using fs::testing::kH200;

namespace {

fs::Measurement meas(const std::string& spec, double median) {
  return fs::testing::measurement(spec, median, 0, fs::TimingMethod::interleaved);
}

fs::TuningKey key(const fs::DeviceIdentity& d, DType dtype, std::int64_t rows, std::int64_t V = 1000,
                  std::int64_t dm = 512) {
  return fs::TuningKey{d, dtype, V, dm, fs::batch_bucket(rows)};
}

}  // namespace

TEST(TuningTwin, Fp16AndBf16AreTwinsFp32HasNone) {
  EXPECT_EQ(fs::tuning_twin(DType::fp16), DType::bf16);
  EXPECT_EQ(fs::tuning_twin(DType::bf16), DType::fp16);
  EXPECT_FALSE(fs::tuning_twin(DType::fp32).has_value());
}

TEST(TuningTwin, Fp16TakesTheBf16EntryAsAnFp16Spec) {
  fs::TuningDb db;
  db.record(key(kH200, DType::bf16, 16), meas("bf16 sm_90 mma_sync tv128 tn16 td64 s4 w4x1", 5.0));
  const auto r = db.lookup(kH200, DType::fp16, 1000, 512, 16, Arch::sm_90);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->level, MatchLevel::exact_device);
  EXPECT_EQ(r->tuned_as, DType::bf16);
  EXPECT_EQ(r->spec.to_string(), "fp16 sm_90 mma_sync tv128 tn16 td64 s4 w4x1");
  // The dtype's own entry comes first.
  db.record(key(kH200, DType::fp16, 16), meas("fp16 sm_90 mma_sync tv64 tn16 td64 s3 w4x1", 9.0));
  const auto own = db.lookup(kH200, DType::fp16, 1000, 512, 16, Arch::sm_90);
  ASSERT_TRUE(own);
  EXPECT_EQ(own->tuned_as, DType::fp16);
  EXPECT_EQ(own->spec.to_string(), "fp16 sm_90 mma_sync tv64 tn16 td64 s3 w4x1");
  // And the other way: bf16 takes fp16's where it has none.
  const auto back = db.lookup(kH200, DType::bf16, 1000, 512, 16, Arch::sm_90);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->tuned_as, DType::bf16);
}

// The twin at a level comes before the dtype's own entries at the next: the
// same GPU model and shape tuned in bf16 time the very kernels an fp16 head
// runs, which another shape or model does not.
TEST(TuningTwin, TwinAtALevelBeforeOwnDtypeAtTheNext) {
  const std::string bf16_here = "bf16 sm_90 mma_sync tv128 tn8 td128 s2 w4x1";
  const std::string fp16_other_shape = "fp16 sm_90 mma_sync tv64 tn8 td128 s4 w4x1";
  const std::string fp16_other_model = "fp16 sm_90 mma_sync tv64 tn8 td64 s3 w4x1";
  fs::TuningDb db;
  db.record(key(kH200, DType::fp16, 1, 2000, 512), meas(fp16_other_shape, 1.0));
  db.record(key(kH100, DType::fp16, 1), meas(fp16_other_model, 1.0));
  auto r = db.lookup(kH200, DType::fp16, 1000, 512, 1, Arch::sm_90);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->level, MatchLevel::nearest_shape);
  EXPECT_EQ(r->spec.to_string(), fp16_other_shape);
  db.record(key(kH200, DType::bf16, 1), meas(bf16_here, 2.0));
  r = db.lookup(kH200, DType::fp16, 1000, 512, 1, Arch::sm_90);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->level, MatchLevel::exact_device);
  EXPECT_EQ(r->tuned_as, DType::bf16);
  EXPECT_EQ(r->spec.to_string(), "fp16 sm_90 mma_sync tv128 tn8 td128 s2 w4x1");
  // Another model's twin entry for the very shape comes after this model's own-dtype closest shape.
  fs::TuningDb db2;
  db2.record(key(kH200, DType::fp16, 1, 2000, 512), meas(fp16_other_shape, 1.0));
  db2.record(key(kH100, DType::bf16, 1), meas(bf16_here, 1.0));
  r = db2.lookup(kH200, DType::fp16, 1000, 512, 1, Arch::sm_90);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->level, MatchLevel::nearest_shape);
  EXPECT_EQ(r->spec.to_string(), fp16_other_shape);
}

TEST(TuningTwin, Fp32TakesNoTwinAndEndsAtTheDefault) {
  fs::TuningDb db;
  db.record(key(kH200, DType::bf16, 16), meas("bf16 sm_90 mma_sync tv128 tn16 td64 s4 w4x1", 5.0));
  EXPECT_FALSE(db.lookup(kH200, DType::fp32, 1000, 512, 16, Arch::sm_90));
  const auto d = fs::tuned_spec(db, kH200, DType::fp32, 1000, 512, 16, Arch::sm_90);
  EXPECT_EQ(d.level, MatchLevel::builtin_default);
  EXPECT_EQ(d.tuned_as, DType::fp32);
  EXPECT_EQ(d.spec, fs::default_spec(DType::fp32, Arch::sm_90, 16));
}

// With the built-in tables, an fp16 head on an H100 or H200 runs the bf16
// winner of every batch size and both shapes as an fp16 kernel, not the
// default (which at N = 256 was `wgmma tv256 tn128`: BENCHMARKS.md session 36).
TEST(TuningTwin, BuiltinTablesServeFp16) {
  const fs::TuningDb empty;
  for (const auto& gpu : {kH200, kH100})
    for (std::int64_t V : {151936, 128256})
      for (std::int64_t rows : {1, 8, 64, 128, 200, 256, 300}) {
        const std::int64_t d = V == 151936 ? 4096 : 8192;
        SCOPED_TRACE(testing::Message() << gpu.name << " V=" << V << " N=" << rows);
        const auto half = fs::tuned_spec(empty, gpu, DType::fp16, V, d, rows, Arch::sm_90);
        const auto bf = fs::tuned_spec(empty, gpu, DType::bf16, V, d, rows, Arch::sm_90);
        // (Since session 42 both GPUs have entries for every bucket of both shapes.)
        EXPECT_NE(half.level, MatchLevel::builtin_default);
        EXPECT_EQ(half.level, bf.level);
        EXPECT_EQ(half.tuned_as, DType::bf16);
        EXPECT_EQ(half.spec.dtype, DType::fp16);
        fs::KernelSpec as_bf16 = half.spec;
        as_bf16.dtype = DType::bf16;
        EXPECT_EQ(as_bf16, bf.spec);
        EXPECT_NO_THROW(half.spec.validate());
      }
}

// Every spec the built-in tables give an fp16 head (its own entries where
// they exist: the H200's S = 4 and S = 16 tables; else the bf16 twin's)
// compiles with no spills and unserialized wgmma. Two bf16 winners of the
// H200's S = 4 and S = 16 tables spill as fp16 kernels (`tv128 tn128 td128
// s3 w12x1 re pp`: 40 bytes stored, 104 loaded; `tv256 tn128 td64 s4 w12x1
// sk re`: 16 and 16), which is why those tables have fp16 entries of their own.
TEST(TuningTwin, BuiltinWinnersCompileAsFp16) {
  const fs::TuningDb empty;
  std::set<std::string> winners;
  for (const auto& e : fs::builtin_tuning_db().entries()) {
    const auto t = fs::tuned_spec(empty, e.key.device, DType::fp16, e.key.vocab, e.key.d_model,
                                  fs::bucket_rows(e.key.bucket), Arch::sm_90, fs::bucket_samples(e.key.samples_bucket));
    ASSERT_NE(t.level, MatchLevel::builtin_default);
    winners.insert(t.spec.to_string());
  }
  ASSERT_GE(winners.size(), 5u);
  for (const std::string& text : winners) {
    const fs::KernelSpec s = fs::KernelSpec::parse(text);
    ASSERT_EQ(s.dtype, DType::fp16);
    SCOPED_TRACE(text);
    const auto k = fs::compile_kernel(s);
    const auto r = fs::kernel_resources(*k, "fs_fused_kernel");
    ASSERT_TRUE(r.has_value()) << k->log;
    EXPECT_EQ(r->spill_store_bytes, 0);
    EXPECT_EQ(r->spill_load_bytes, 0);
    EXPECT_FALSE(r->wgmma_serialized) << k->log;
  }
}
