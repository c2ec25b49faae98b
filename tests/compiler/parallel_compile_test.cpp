// parallel_compile_test.cpp: the compile pool (the tuner's and Sampler::reserve's)
// puts every spec in the on-disk module cache, reports failures per spec and
// never throws.
#include "compiler/parallel_compile.hpp"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>

#include "fusedsample/compiler.hpp"
#include "fusedsample/tuner.hpp"
#include "tests/support/temp_cache_dir.hpp"

namespace fs = fusedsample;

namespace {

class ParallelCompile : public fs::testing::TempCacheDirTest {};

std::size_t module_files(const std::filesystem::path& dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(dir / "modules", ec)) n += f.path().extension() == ".fsmod";
  return n;
}

}  // namespace

TEST_F(ParallelCompile, CompilesIntoTheDiskCacheAndReportsFailures) {
  fs::SearchSpaceOptions so;
  so.max_candidates = 3;
  std::vector<fs::KernelSpec> specs = fs::search_space(fs::DType::fp16, fs::Arch::sm_80, 4, so);
  ASSERT_EQ(specs.size(), 3u);
  fs::KernelSpec broken = specs[0];
  broken.tile_n = 12;  // fails validation inside compile_kernel
  specs.push_back(broken);
  std::size_t calls = 0, last_done = 0;
  const auto out = fs::compile_all(specs, 4, [&](const fs::CompileOutcome&, std::size_t done) {
    ++calls;
    EXPECT_EQ(done, last_done + 1);
    last_done = done;
  });
  ASSERT_EQ(out.size(), specs.size());
  EXPECT_EQ(calls, specs.size());
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(out[i].ok) << out[i].error;
    EXPECT_EQ(out[i].spec, specs[i]);
  }
  EXPECT_FALSE(out[3].ok);
  EXPECT_NE(out[3].error.find("tile_n"), std::string::npos) << out[3].error;
  EXPECT_EQ(module_files(dir_), 3u);
  EXPECT_TRUE(fs::compile_all({}).empty());
}

// Kernels the process memoized while the disk cache was off still land in
// the cache compile_all runs under (the memo alone never reads the disk).
TEST_F(ParallelCompile, StoresKernelsTheProcessAlreadyHad) {
  fs::SearchSpaceOptions so;
  so.max_candidates = 2;
  const std::vector<fs::KernelSpec> specs = fs::search_space(fs::DType::bf16, fs::Arch::sm_80, 2, so);
  ASSERT_EQ(specs.size(), 2u);
  ::setenv("FUSEDSAMPLE_CACHE_DISABLE", "1", 1);
  for (const auto& s : specs) ASSERT_TRUE(fs::compile_kernel(s));
  ::unsetenv("FUSEDSAMPLE_CACHE_DISABLE");
  EXPECT_EQ(module_files(dir_), 0u);
  const auto out = fs::compile_all(specs, 2);
  for (const auto& o : out) EXPECT_TRUE(o.ok) << o.error;
  EXPECT_EQ(module_files(dir_), 2u);
}
