// tuner_options_test.cpp: tune() refuses bad options before it touches the
// driver, and without a GPU it throws NoGpu (skipped on a GPU machine).
#include <gtest/gtest.h>

#include "fusedsample/device.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/tuner.hpp"

namespace fs = fusedsample;

namespace {

fs::TuneOptions valid() {
  fs::TuneOptions o;
  o.vocab = 1000;
  o.hidden = 64;
  o.buckets = {0, 3};
  o.save = false;
  return o;
}

}  // namespace

TEST(TunerOptions, BadOptionsAreInvalidArgumentsEverywhere) {
  auto expect_bad = [](auto mutate, const char* what) {
    fs::TuneOptions o = valid();
    mutate(o);
    try {
      fs::tune(o);
      ADD_FAILURE() << "no exception for " << what;
    } catch (const fs::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_bad([](fs::TuneOptions& o) { o.vocab = 0; }, "vocab");
  expect_bad([](fs::TuneOptions& o) { o.hidden = 12; }, "hidden");
  expect_bad([](fs::TuneOptions& o) { o.buckets.clear(); }, "bucket");
  expect_bad([](fs::TuneOptions& o) { o.buckets = {fs::kNumBatchBuckets}; }, "bucket");
  expect_bad([](fs::TuneOptions& o) { o.samples_bucket = fs::kNumSampleBuckets; }, "sample bucket");
  expect_bad([](fs::TuneOptions& o) { o.samples_bucket = -1; }, "sample bucket");
  expect_bad([](fs::TuneOptions& o) { o.reps = 0; }, "reps");
  expect_bad([](fs::TuneOptions& o) { o.warmup = -1; }, "warmup");
  expect_bad([](fs::TuneOptions& o) { o.max_candidates = 0; }, "max_candidates");
  expect_bad([](fs::TuneOptions& o) { o.finalists = -1; }, "finalists");
}

TEST(TunerOptions, WithoutAGpuTuneThrowsNoGpu) {
  if (fs::gpu_available()) GTEST_SKIP() << "a GPU is available here; the no-GPU behaviour is tested on GPU-less CI";
  EXPECT_THROW(fs::tune(valid()), fs::NoGpu);
}

TEST(TunerOptions, StatusNames) {
  EXPECT_EQ(fs::to_string(fs::CandidateStatus::timed), "timed");
  EXPECT_EQ(fs::to_string(fs::CandidateStatus::mismatch), "mismatch");
  EXPECT_EQ(fs::to_string(fs::CandidateStatus::failed), "failed");
  EXPECT_EQ(fs::to_string(fs::CandidateStatus::over_budget), "over_budget");
}
