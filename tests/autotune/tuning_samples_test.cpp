// tuning_samples_test.cpp: the sample buckets (samples per row 1, 2..4, 5 or
// more) in the tuning key, the lookup (the samples' own bucket at every level
// first, then each smaller one), the JSON field and the built-in tables. Before
// session 37 the key had no sample count: every S ran the S = 1 winners, up to
// 1.11 x the unfused pipeline's time at S = 4 (H200, BENCHMARKS.md session 36).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>

#include "fusedsample/errors.hpp"
#include "fusedsample/tuning_db.hpp"
#include "tests/support/tuning_fixtures.hpp"

namespace fs = fusedsample;
using fs::Arch;
using fs::DType;
using fs::MatchLevel;
using fs::testing::kH100;
using fs::testing::kH200;

namespace {

constexpr const char* kSpecA = "bf16 sm_90 mma_sync tv64 tn8 td128 s4 w4x1";
constexpr const char* kSpecB = "bf16 sm_90 mma_sync tv128 tn8 td128 s2 w4x1";
constexpr const char* kSpecC = "bf16 sm_90 mma_sync tv256 tn8 td64 s3 w4x1";

fs::TuningKey key(const fs::DeviceIdentity& d, int samples, std::int64_t rows = 8, std::int64_t V = 1000,
                  std::int64_t dm = 512) {
  return fs::TuningKey{d, DType::bf16, V, dm, fs::batch_bucket(rows), fs::sample_bucket(samples)};
}

fs::Measurement meas(const std::string& spec, double median) {
  return fs::testing::measurement(spec, median, 0, fs::TimingMethod::interleaved);
}

// A database of one entry of `a_spec` for a_gpu at a_samples and one of
// b_spec for b_gpu at b_samples.
fs::TuningDb two_entries(const fs::DeviceIdentity& a_gpu, int a_samples, const char* a_spec,
                         const fs::DeviceIdentity& b_gpu, int b_samples, const char* b_spec) {
  fs::TuningDb db;
  db.record(key(a_gpu, a_samples), meas(a_spec, 10));
  db.record(key(b_gpu, b_samples), meas(b_spec, 20));
  return db;
}

// The lookup's answer for a bf16 head of the keys' shape, N = 8, on `gpu`.
std::optional<fs::TunedSpec> pick(const fs::TuningDb& db, const fs::DeviceIdentity& gpu, int samples) {
  return db.lookup(gpu, DType::bf16, 1000, 512, 8, Arch::sm_90, samples);
}

}  // namespace

TEST(SampleBucket, CountsMapToTheNextBucketUpAndPastTheLastToIt) {
  EXPECT_EQ(fs::sample_bucket(1), 0);
  for (int s : {2, 3, 4}) EXPECT_EQ(fs::sample_bucket(s), 1) << s;
  for (int s : {5, 16, 17, 1000, 0x7fffffff}) EXPECT_EQ(fs::sample_bucket(s), 2) << s;
  EXPECT_THROW(fs::sample_bucket(0), fs::InvalidArgument);
  EXPECT_THROW(fs::sample_bucket(-3), fs::InvalidArgument);
  for (int b = 0; b < fs::kNumSampleBuckets; ++b) {
    EXPECT_EQ(fs::parse_sample_bucket(fs::sample_bucket_label(b)), b);
    EXPECT_EQ(fs::sample_bucket(fs::bucket_samples(b)), b);
    EXPECT_EQ(std::to_string(fs::bucket_samples(b)), fs::sample_bucket_label(b));
  }
  EXPECT_THROW(fs::parse_sample_bucket("3"), fs::InvalidArgument);
  EXPECT_THROW(fs::sample_bucket_label(fs::kNumSampleBuckets), fs::InvalidArgument);
  EXPECT_THROW(fs::bucket_samples(-1), fs::InvalidArgument);
}

TEST(TuningSamples, EntriesOfTwoSampleBucketsAreApart) {
  const fs::TuningDb db = two_entries(kH200, 1, kSpecA, kH200, 4, kSpecB);
  ASSERT_EQ(db.entries().size(), 2u);
  EXPECT_EQ(db.find(key(kH200, 1))->best()->spec, kSpecA);
  EXPECT_EQ(db.find(key(kH200, 3))->best()->spec, kSpecB);
  EXPECT_EQ(db.find(key(kH200, 16)), nullptr);
}

TEST(TuningSamples, LookupTakesTheSamplesOwnBucketThenEachSmallerOne) {
  fs::TuningDb db = two_entries(kH200, 1, kSpecA, kH200, 4, kSpecB);
  auto r = pick(db, kH200, 1);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->spec.to_string(), kSpecA);
  EXPECT_EQ(r->samples_bucket, 0);
  r = pick(db, kH200, 3);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->spec.to_string(), kSpecB);
  EXPECT_EQ(r->samples_bucket, 1);
  // No S = 16 entry: the next smaller bucket's (S = 4), not S = 1's.
  r = pick(db, kH200, 64);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->spec.to_string(), kSpecB);
  EXPECT_EQ(r->samples_bucket, 1);
  db.record(key(kH200, 16), meas(kSpecC, 30));
  r = pick(db, kH200, 64);
  EXPECT_EQ(r->spec.to_string(), kSpecC);
  EXPECT_EQ(r->samples_bucket, 2);
  // lookup_at searches one sample bucket only.
  EXPECT_FALSE(db.lookup_at(MatchLevel::exact_device, kH100, DType::bf16, 1000, 512, 8, Arch::sm_90, 4));
  EXPECT_EQ(db.lookup_at(MatchLevel::same_arch, kH100, DType::bf16, 1000, 512, 8, Arch::sm_90, 4)->spec.to_string(),
            kSpecB);
}

// The sample bucket is the outermost level: another GPU model's S = 4 entry
// (same architecture) before this model's S = 1 entry, because at S > 1 the
// S = 1 winners ran up to 17 % slower than the best measured spec (session 36),
// more than a model's table loses on another model of its architecture.
TEST(TuningSamples, OwnSampleBucketOfTheArchitectureBeforeThisModelsSingleSample) {
  const fs::TuningDb db = two_entries(kH100, 1, kSpecA, kH200, 4, kSpecB);
  auto r = pick(db, kH100, 4);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->spec.to_string(), kSpecB);
  EXPECT_EQ(r->level, MatchLevel::same_arch);
  EXPECT_EQ(r->samples_bucket, 1);
  r = pick(db, kH100, 1);
  EXPECT_EQ(r->spec.to_string(), kSpecA);
  EXPECT_EQ(r->level, MatchLevel::exact_device);
  // The user's database and the built-in table: a user's S = 4 entry for
  // this shape wins over everything built in for S = 4.
  const auto t = fs::tuned_spec(db, kH100, DType::bf16, 1000, 512, 8, Arch::sm_90, 4);
  EXPECT_EQ(t.spec.to_string(), kSpecB);
  // Nothing anywhere: default_spec, sample bucket 0.
  const fs::TuningDb empty;
  const auto d = fs::tuned_spec(empty, {"Some GPU", 10, 8, 9}, DType::bf16, 1000, 512, 8, Arch::sm_89, 16);
  EXPECT_EQ(d.level, MatchLevel::builtin_default);
  EXPECT_EQ(d.samples_bucket, 0);
  EXPECT_THROW(fs::tuned_spec(empty, kH200, DType::bf16, 1000, 512, 8, Arch::sm_90, 0), fs::InvalidArgument);
}

TEST(TuningSamples, JsonKeepsTheSampleBucketAndOldFilesMeanOneSample) {
  fs::TuningDb db;
  db.record(key(kH200, 1), meas(kSpecA, 10));
  db.record(key(kH200, 16), meas(kSpecC, 30));
  const std::string text = fs::tuning_db_to_json(db);
  EXPECT_NE(text.find("\"samples\": \"16\""), std::string::npos) << text;
  const fs::TuningDb back = fs::tuning_db_from_json(text, "t.json");
  ASSERT_EQ(back.entries().size(), 2u);
  ASSERT_NE(back.find(key(kH200, 16)), nullptr);
  EXPECT_EQ(back.find(key(kH200, 16))->best()->spec, kSpecC);

  const std::string entry =
      R"({"gpu_name":"NVIDIA H200","multiprocessors":132,"compute_capability":"9.0","dtype":"bf16","vocab":1000,)"
      R"("d_model":512,"bucket":"8",)";
  const std::string configs = R"("configs":[{"spec":")" + std::string(kSpecA) + R"(","median_us":1}]})";
  auto doc = [&](const std::string& samples) {
    return R"({"schema":"fusedsample-tuning","version":1,"entries":[)" + entry + samples + configs + "]}";
  };
  const fs::TuningDb old = fs::tuning_db_from_json(doc(""), "old.json");  // written before sample buckets
  ASSERT_EQ(old.entries().size(), 1u);
  EXPECT_EQ(old.entries()[0].key.samples_bucket, 0);
  EXPECT_EQ(fs::tuning_db_from_json(doc(R"("samples":"4",)"), "s.json").entries()[0].key.samples_bucket, 1);
  for (const std::string& bad : {std::string(R"("samples":"3",)"), std::string(R"("samples":4,)")}) {
    try {
      fs::tuning_db_from_json(doc(bad), "bad.json");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const fs::FileError& e) {
      EXPECT_NE(std::string(e.what()).find("bad.json: /entries/0/samples"), std::string::npos) << e.what();
    }
  }
}

// The built-in H200 tables answer S = 2..4 and S >= 5 from their own sample
// buckets for both shapes and dtypes (fp16 from its own entries); the H100,
// which has none, takes the H200's (same_arch) rather than its S = 1 table.
TEST(TuningSamples, BuiltinTablesServeSeveralSamples) {
  const fs::TuningDb empty;
  for (std::int64_t V : {151936, 128256})
    for (std::int64_t rows : {1, 16, 128, 200, 256})
      for (int samples : {2, 4, 5, 16, 100})
        for (DType dtype : {DType::bf16, DType::fp16}) {
          const std::int64_t d = V == 151936 ? 4096 : 8192;
          SCOPED_TRACE(testing::Message() << "V=" << V << " N=" << rows << " S=" << samples << " "
                                          << fs::to_string(dtype));
          const auto h200 = fs::tuned_spec(empty, kH200, dtype, V, d, rows, Arch::sm_90, samples);
          EXPECT_EQ(h200.level, MatchLevel::exact_device);
          EXPECT_EQ(h200.samples_bucket, fs::sample_bucket(samples));
          EXPECT_EQ(h200.tuned_as, dtype);
          const auto h100 = fs::tuned_spec(empty, kH100, dtype, V, d, rows, Arch::sm_90, samples);
          EXPECT_EQ(h100.level, MatchLevel::same_arch);
          EXPECT_EQ(h100.spec, h200.spec);
        }
}

// Since session 38 the five model shapes of the S = 1 model-shapes table have
// bf16 entries of their own for the sample buckets 4 and 16: an H200 asking
// for one of them finds its own shape (exact_device), fp16 through its twin.
TEST(TuningSamples, BuiltinModelShapesHaveSampleBuckets) {
  const fs::TuningDb empty;
  for (const auto& [V, d] : {std::pair<std::int64_t, std::int64_t>{128256, 4096},
                             {152064, 3584},
                             {256000, 3584},
                             {256000, 2304},
                             {32768, 4096}})
    for (std::int64_t rows : {1, 64, 128, 200, 256})
      for (int samples : {3, 16})
        for (DType dtype : {DType::bf16, DType::fp16}) {
          SCOPED_TRACE(testing::Message() << "V=" << V << " d=" << d << " N=" << rows << " S=" << samples << " "
                                          << fs::to_string(dtype));
          const auto t = fs::tuned_spec(empty, kH200, dtype, V, d, rows, Arch::sm_90, samples);
          EXPECT_EQ(t.level, MatchLevel::exact_device);
          EXPECT_EQ(t.samples_bucket, fs::sample_bucket(samples));
          EXPECT_EQ(t.tuned_as, DType::bf16);
          EXPECT_EQ(t.spec.dtype, dtype);
        }
}

// The tuner leaves ping-pong out of several-samples buckets (search_space,
// session 38: erratic there); no shipped entry of such a bucket picks it.
TEST(TuningSamples, BuiltinSeveralSamplesWinnersAreNotPingPong) {
  int entries = 0;
  for (const auto& e : fs::builtin_tuning_db().entries()) {
    if (e.key.samples_bucket == 0) continue;
    ++entries;
    const auto* best = e.best();
    ASSERT_NE(best, nullptr);
    EXPECT_FALSE(fs::KernelSpec::parse(best->spec).ping_pong)
        << best->spec << " for V=" << e.key.vocab << " d=" << e.key.d_model << " bucket " << e.key.bucket;
  }
  EXPECT_GE(entries, 7 * 2 * 12);  // 7 shapes x S = 4 and 16 x 12 batch buckets, bf16 at least
}
