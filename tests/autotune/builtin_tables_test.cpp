// builtin_tables_test.cpp: the built-in tuning tables (autotune/builtin/*.json,
// our own `fusedsample tune` exports with real timings, embedded at build
// time): every file parses, every config is a valid spec,
// every shape holds all twelve batch buckets, and the lookup answers each
// entry with its own fastest config at the exact-device level.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "fusedsample/compiler.hpp"
#include "fusedsample/tuner.hpp"
#include "fusedsample/tuning_db.hpp"
#include "tests/support/tuning_fixtures.hpp"

namespace fs = fusedsample;

TEST(TuningDb, BuiltinTableIsOurTuningRuns) {
  const fs::TuningDb& builtin = fs::builtin_tuning_db();
  ASSERT_FALSE(fs::embedded_tuning_files().empty());
  // Every config of every file is accepted as it is: the library leaves out a
  // config this build does not accept (session 44), so builtin_tuning_db()
  // alone would not show one that a template change pushed past a limit.
  for (const auto& f : fs::embedded_tuning_files())
    EXPECT_NO_THROW(fs::tuning_db_from_json(std::string_view(f.data, f.size), f.name)) << f.name;
  ASSERT_FALSE(builtin.empty());
  std::map<std::string, int> buckets_per_shape;
  const fs::TuningDb empty;
  for (const auto& e : builtin.entries()) {
    ASSERT_GE(e.configs.size(), 2u) << e.key.device.name;
    for (const auto& m : e.configs) {
      EXPECT_GT(m.median_us, 0.0) << m.spec;
      EXPECT_NO_THROW(fs::KernelSpec::parse(m.spec).validate()) << m.spec;
    }
    ++buckets_per_shape[fmt::format("{} {} {} {} S{}", e.key.device.name, e.key.vocab, e.key.d_model,
                                    fs::to_string(e.key.dtype), fs::sample_bucket_label(e.key.samples_bucket))];
    const auto r = fs::tuned_spec(empty, e.key.device, e.key.dtype, e.key.vocab, e.key.d_model,
                                  fs::bucket_rows(e.key.bucket), fs::Arch::sm_90, fs::bucket_samples(e.key.samples_bucket));
    EXPECT_EQ(r.level, fs::MatchLevel::exact_device);
    EXPECT_EQ(r.samples_bucket, e.key.samples_bucket);
    EXPECT_EQ(r.tuned_as, e.key.dtype);
    EXPECT_EQ(r.spec.to_string(), e.best()->spec) << e.key.device.name << " bucket " << e.key.bucket;
  }
  // Every table holds the twelve buckets of 1..256, 160, 192 and 224 included (the H200's since session 34,
  // the H100's since session 42).
  for (const auto& [shape, n] : buckets_per_shape) EXPECT_EQ(n, 12) << shape;
  EXPECT_TRUE(buckets_per_shape.count("NVIDIA H200 151936 4096 bf16 S1"));
  EXPECT_TRUE(buckets_per_shape.count("NVIDIA H200 128256 8192 bf16 S1"));
  EXPECT_TRUE(buckets_per_shape.count("NVIDIA H100 80GB HBM3 151936 4096 bf16 S1"));
  EXPECT_TRUE(buckets_per_shape.count("NVIDIA H100 80GB HBM3 128256 8192 bf16 S1"));
  // Several samples per row: the H200's S = 4 and S = 16 tables, both shapes and dtypes (session 37).
  for (const char* t : {"bf16", "fp16"})
    for (const char* s : {"S4", "S16"}) {
      EXPECT_TRUE(buckets_per_shape.count(fmt::format("NVIDIA H200 151936 4096 {} {}", t, s)));
      EXPECT_TRUE(buckets_per_shape.count(fmt::format("NVIDIA H200 128256 8192 {} {}", t, s)));
    }
  // Past 256 rows the bucket of a part: 257 rows are two parts of 129 (bucket 160).
  const auto big = fs::tuned_spec(empty, fs::testing::kH200, fs::DType::bf16, 151936, 4096, 257, fs::Arch::sm_90);
  EXPECT_EQ(big.level, fs::MatchLevel::exact_device);
  EXPECT_EQ(big.spec.to_string(), fs::tuned_spec(empty, fs::testing::kH200, fs::DType::bf16, 151936, 4096, 160, fs::Arch::sm_90).spec.to_string());
  // No measurement for a shape or GPU of another architecture: default.
  EXPECT_EQ(fs::tuned_spec(empty, {"NVIDIA A100", 108, 8, 0}, fs::DType::bf16, 151936, 4096, 257, fs::Arch::sm_80).level,
            fs::MatchLevel::builtin_default);
  // Another Hopper GPU falls back to a table of the same architecture; a user
  // entry for it wins over that.
  const fs::DeviceIdentity other{"NVIDIA Hopper (untuned)", 114, 9, 0};
  EXPECT_EQ(fs::tuned_spec(empty, other, fs::DType::bf16, 151936, 4096, 8, fs::Arch::sm_90).level, fs::MatchLevel::same_arch);
  fs::TuningDb user;
  user.record(fs::TuningKey{other, fs::DType::bf16, 151936, 4096, fs::batch_bucket(8)},
              fs::testing::measurement("bf16 sm_90 mma_sync tv64 tn8 td128 s4 w4x1", 3.0));
  const auto r = fs::tuned_spec(user, other, fs::DType::bf16, 151936, 4096, 8, fs::Arch::sm_90);
  EXPECT_EQ(r.level, fs::MatchLevel::exact_device);
  EXPECT_EQ(r.spec.to_string(), "bf16 sm_90 mma_sync tv64 tn8 td128 s4 w4x1");
}
