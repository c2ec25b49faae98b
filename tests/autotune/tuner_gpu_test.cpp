// tuner_gpu_test.cpp: the autotuner end to end on a small shape: every
// bucket gets its default timed, correct configs pass the exactness check,
// the finalist round re-times the fastest interleaved and picks the winner,
// results land in tuning.json (with their timing method) and tuned_spec()
// picks them up; without a finalist round the fastest screened config wins;
// a spent budget still times each bucket's default; a tune of a sample
// bucket records under it.
#include <gtest/gtest.h>

#include <filesystem>

#include "fusedsample/tuner.hpp"
#include "fusedsample/tuning_db.hpp"
#include "tests/support/gpu_test_support.hpp"
#include "tests/support/temp_cache_dir.hpp"

namespace fs = fusedsample;

namespace {

class TunerGpu : public fs::testing::TempCacheDirTest {};

fs::TuneOptions small_options(fs::DType dtype) {
  fs::TuneOptions o;
  o.vocab = 5003;  // not a multiple of any tile_v
  o.hidden = 264;  // not a multiple of tile_d
  o.dtype = dtype;
  o.buckets = {0, 4};  // rows 1 and 16
  o.reps = 3;
  o.warmup = 1;
  o.max_candidates = 4;
  o.budget_s = 0;
  return o;
}

}  // namespace

TEST_F(TunerGpu, TimesChecksRecordsAndIsPickedUp) {
  FS_REQUIRE_GPU();
  for (fs::DType dtype : {fs::DType::bf16, fs::DType::fp32}) {
    SCOPED_TRACE(std::string(fs::to_string(dtype)));
    fs::TuneOptions o = small_options(dtype);
    int lines = 0;
    o.progress = [&](const std::string&) { ++lines; };
    const fs::TuneReport r = fs::tune(o);
    EXPECT_GT(lines, 0);
    EXPECT_GT(r.floor_us, 0);
    EXPECT_EQ(r.compile_failures, 0);
    EXPECT_FALSE(r.budget_exhausted);
    ASSERT_EQ(r.buckets.size(), 2u);
    for (const fs::BucketResult& b : r.buckets) {
      SCOPED_TRACE(b.rows);
      ASSERT_NE(b.baseline(), nullptr);
      ASSERT_NE(b.best(), nullptr);
      EXPECT_EQ(b.count(fs::CandidateStatus::mismatch), 0);
      int finalists = 0;
      for (const auto& c : b.candidates) {
        EXPECT_TRUE(c.status == fs::CandidateStatus::timed || c.status == fs::CandidateStatus::failed)
            << c.spec.to_string() << ": " << fs::to_string(c.status) << " " << c.detail;
        if (c.final_us > 0) {
          ++finalists;
          EXPECT_GE(c.final_calls, o.reps) << c.spec.to_string();
          EXPECT_LE(b.best()->final_us, c.final_us) << c.spec.to_string();  // the round's winner
        }
      }
      EXPECT_EQ(finalists, std::min(o.finalists, b.count(fs::CandidateStatus::timed)));
      EXPECT_GT(b.best()->final_us, 0);
    }
    ASSERT_TRUE(r.saved.has_value());
    EXPECT_EQ(*r.saved, dir_ / "tuning.json");
    const fs::TuningDb saved = fs::load_tuning_db(*r.saved);
    for (const fs::BucketResult& b : r.buckets) {
      const fs::TuningEntry* e = saved.find(fs::TuningKey{r.device, dtype, o.vocab, o.hidden, b.bucket});
      ASSERT_NE(e, nullptr);
      int interleaved = 0;
      for (const auto& m : e->configs) interleaved += m.method == fs::TimingMethod::interleaved;
      EXPECT_EQ(interleaved, std::min(o.finalists, b.count(fs::CandidateStatus::timed)));
      EXPECT_EQ(int(e->configs.size()), b.count(fs::CandidateStatus::timed) + interleaved);
      ASSERT_NE(e->best(), nullptr);
      EXPECT_EQ(e->best()->method, fs::TimingMethod::interleaved);
      const fs::TunedSpec t = fs::tuned_spec(r.device, dtype, o.vocab, o.hidden, b.rows, r.arch);
      EXPECT_EQ(t.level, fs::MatchLevel::exact_device);
      EXPECT_EQ(t.spec, b.best()->spec);
    }
  }
}

TEST_F(TunerGpu, WithoutFinalistsTheFastestScreenedConfigWins) {
  FS_REQUIRE_GPU();
  fs::TuneOptions o = small_options(fs::DType::bf16);
  o.finalists = 1;  // a round of one compares nothing: none is run
  const fs::TuneReport r = fs::tune(o);
  ASSERT_EQ(r.buckets.size(), 2u);  // the loop below checks each
  const fs::TuningDb saved = fs::load_tuning_db(dir_ / "tuning.json");
  for (const fs::BucketResult& b : r.buckets) {
    SCOPED_TRACE(b.rows);
    ASSERT_NE(b.best(), nullptr);
    ASSERT_NE(b.baseline(), nullptr);
    EXPECT_LE(b.best()->median_us, b.baseline()->median_us);
    for (const auto& c : b.candidates) {
      EXPECT_EQ(c.final_us, 0) << c.spec.to_string();
      if (c.status == fs::CandidateStatus::timed) EXPECT_LE(b.best()->median_us, c.median_us);
    }
    const fs::TuningEntry* e = saved.find(fs::TuningKey{r.device, o.dtype, o.vocab, o.hidden, b.bucket});
    ASSERT_NE(e, nullptr);
    for (const auto& m : e->configs) EXPECT_EQ(m.method, fs::TimingMethod::flushed) << m.spec;
    EXPECT_EQ(fs::tuned_spec(r.device, o.dtype, o.vocab, o.hidden, b.rows, r.arch).spec, b.best()->spec);
  }
}

TEST_F(TunerGpu, SpentBudgetStillTimesEveryDefault) {
  FS_REQUIRE_GPU();
  fs::TuneOptions o = small_options(fs::DType::bf16);
  o.budget_s = 1e-6;
  o.save = false;
  const fs::TuneReport r = fs::tune(o);
  EXPECT_TRUE(r.budget_exhausted);
  EXPECT_FALSE(r.saved.has_value());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "tuning.json"));
  ASSERT_EQ(r.buckets.size(), 2u);  // the loop below checks each
  for (const fs::BucketResult& b : r.buckets) {
    ASSERT_NE(b.baseline(), nullptr);
    EXPECT_EQ(b.count(fs::CandidateStatus::timed), 1);
    EXPECT_EQ(b.count(fs::CandidateStatus::over_budget), int(b.candidates.size()) - 1);
  }
}

// A tune of a sample bucket (--samples) records its entries under that
// bucket only: the Sampler's lookup for S in 2..4 picks them, S = 1 does not.
TEST_F(TunerGpu, SampleBucketEntriesServeThatSampleCount) {
  FS_REQUIRE_GPU();
  fs::TuneOptions o = small_options(fs::DType::bf16);
  o.samples_bucket = fs::sample_bucket(4);
  const fs::TuneReport r = fs::tune(o);
  const fs::TuningDb saved = fs::load_tuning_db(dir_ / "tuning.json");
  ASSERT_EQ(saved.entries().size(), r.buckets.size());
  for (const fs::BucketResult& b : r.buckets) {
    SCOPED_TRACE(b.rows);
    ASSERT_NE(b.best(), nullptr);
    EXPECT_EQ(saved.find(fs::TuningKey{r.device, o.dtype, o.vocab, o.hidden, b.bucket}), nullptr);
    const fs::TuningEntry* e = saved.find(fs::TuningKey{r.device, o.dtype, o.vocab, o.hidden, b.bucket, 1});
    ASSERT_NE(e, nullptr);
    for (int samples : {2, 4}) {
      const fs::TunedSpec t = fs::tuned_spec(r.device, o.dtype, o.vocab, o.hidden, b.rows, r.arch, samples);
      EXPECT_EQ(t.level, fs::MatchLevel::exact_device);
      EXPECT_EQ(t.samples_bucket, 1);
      EXPECT_EQ(t.spec, b.best()->spec);
    }
    // One sample per row finds no entry of this GPU and shape at S = 1.
    EXPECT_NE(fs::tuned_spec(r.device, o.dtype, o.vocab, o.hidden, b.rows, r.arch, 1).level,
              fs::MatchLevel::exact_device);
  }
}
