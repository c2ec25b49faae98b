// candidate_screen_test.cpp: step 2 of a tune compiles each distinct
// candidate of all buckets once, in the buckets' order, and sets aside those
// that do not compile, with the first line of the reason.
#include "autotune/candidate_screen.hpp"

#include <gtest/gtest.h>

#include "fusedsample/tuner.hpp"
#include "tests/support/temp_cache_dir.hpp"

namespace fs = fusedsample;

namespace {

class CandidateScreen : public fs::testing::TempCacheDirTest {};

fs::BucketResult bucket(const fs::KernelSpec& default_spec, const std::vector<fs::KernelSpec>& specs) {
  fs::BucketResult b;
  b.default_spec = default_spec;
  for (const auto& s : specs) {
    fs::CandidateResult c;
    c.spec = s;
    b.candidates.push_back(c);
  }
  return b;
}

}  // namespace

TEST_F(CandidateScreen, CompilesEachDistinctSpecOnceAndSetsAsideFailures) {
  fs::SearchSpaceOptions so;
  so.max_candidates = 3;
  const std::vector<fs::KernelSpec> specs = fs::search_space(fs::DType::fp16, fs::Arch::sm_80, 4, so);
  ASSERT_EQ(specs.size(), 3u);
  fs::KernelSpec broken = specs[0];
  broken.tile_n = 12;  // fails validation inside compile_kernel
  const std::vector<fs::BucketResult> buckets = {bucket(specs[0], {specs[0], specs[1], broken}),
                                                 bucket(specs[1], {specs[1], specs[2], specs[0]})};
  std::vector<std::string> lines;
  const auto out = fs::autotune::compile_and_screen(
      buckets, [&](const std::string& l) { lines.push_back(l); }, [] { return 1.5; });
  ASSERT_EQ(out.distinct.size(), 4u);
  EXPECT_EQ(out.distinct[0], specs[0]);
  EXPECT_EQ(out.distinct[1], specs[1]);
  EXPECT_EQ(out.distinct[2], broken);
  EXPECT_EQ(out.distinct[3], specs[2]);
  EXPECT_EQ(out.compiled, 3);
  EXPECT_EQ(out.compile_failures, 1);
  EXPECT_EQ(out.spilling, 0);
  ASSERT_EQ(out.rejected.size(), 1u);
  const auto it = out.rejected.find(broken.to_string());
  ASSERT_NE(it, out.rejected.end());
  EXPECT_NE(it->second.find("tile_n"), std::string::npos) << it->second;
  EXPECT_EQ(it->second.find('\n'), std::string::npos) << it->second;
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.front().find("compiling 4 distinct candidates for 2 bucket(s)"), std::string::npos) << lines.front();
  EXPECT_EQ(lines.back(), "[compile] 4/4 (1.5 s)");
}

TEST(CandidateScreenText, FirstLineIsCutAt240Characters) {
  EXPECT_EQ(fs::autotune::first_line("one\ntwo"), "one");
  EXPECT_EQ(fs::autotune::first_line(""), "");
  const std::string longer(300, 'x');
  const std::string cut = fs::autotune::first_line(longer + "\nrest");
  EXPECT_EQ(cut.size(), 240u);
  EXPECT_EQ(cut.substr(237), "...");
}
