// cli_compile_test.cpp: `fusedsample compile` (no GPU needed): the spec it
// compiles carries the cluster option, a cluster the kernel cannot have is a
// usage error that names the field, and the module lands in the module cache.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "tests/support/cli_runner.hpp"

namespace {

using fusedsample::testing::run_cli;

std::filesystem::path cache_dir() {
  return std::filesystem::temp_directory_path() / ("fs-cli-compile-" + std::to_string(::getpid()));
}

TEST(CliCompile, ClusterOptionReachesTheSpec) {
  const auto dir = cache_dir();
  const auto r = run_cli(dir, "compile --spec 'bf16 sm_90a wgmma_coop tv128 tn64 td128 s4 w20x1' --cluster 2");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("wgmma_coop tv128 tn64 td128 s4 w20x1 c2"), std::string::npos) << r.output;
  const auto bad = run_cli(dir, "compile --spec 'bf16 sm_90a wgmma_coop tv128 tn64 td64 s4 w20x1' --cluster 3");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("cluster"), std::string::npos) << bad.output;
  const auto other = run_cli(dir, "compile --spec 'bf16 sm_90 mma_sync tv128 tn16 td64 s4 w4x1' --cluster 2");
  EXPECT_EQ(other.code, 2) << other.output;
  EXPECT_NE(other.output.find("wgmma_coop only"), std::string::npos) << other.output;
  std::filesystem::remove_all(dir);
}

// `compile` fills the module cache, as the README says (until session 40 it
// compiled uncached and stored nothing): the module is on disk under the key
// it prints, and a second run finds it there. A spec with a launch setting
// (l2p0) shares its binary's entry.
TEST(CliCompile, FillsTheModuleCache) {
  const auto dir = cache_dir() / "fills";
  std::filesystem::remove_all(dir);
  const std::string spec = "bf16 sm_90 mma_sync tv128 tn16 td64 s4 w4x1";
  const auto first = run_cli(dir, "compile --spec '" + spec + "'");
  ASSERT_EQ(first.code, 0) << first.output;
  EXPECT_NE(first.output.find("compiled and stored"), std::string::npos) << first.output;
  const auto at = first.output.find("cache key");
  ASSERT_NE(at, std::string::npos) << first.output;
  const std::string key = first.output.substr(at + 15, first.output.find('\n', at) - at - 15);
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "modules" / (key + ".fsmod"))) << key << "\n" << first.output;
  const auto second = run_cli(dir, "compile --spec '" + spec + "'");
  ASSERT_EQ(second.code, 0) << second.output;
  EXPECT_NE(second.output.find("found there"), std::string::npos) << second.output;
  const std::string tma = "bf16 sm_90a wgmma_coop tv128 tn64 td128 s4 w16x1";
  ASSERT_EQ(run_cli(dir, "compile --spec '" + tma + "'").code, 0);
  const auto promoted = run_cli(dir, "compile --spec '" + tma + " l2p0'");
  ASSERT_EQ(promoted.code, 0) << promoted.output;
  EXPECT_NE(promoted.output.find("found there"), std::string::npos) << promoted.output;
  std::filesystem::remove_all(dir);
  // A cache that cannot be written: compiled, and it says so.
  const auto file = cache_dir() / "a-file";
  std::filesystem::create_directories(file.parent_path());
  { std::ofstream(file) << "x"; }
  const auto unwritable = run_cli(file / "cache", "compile --spec '" + spec + "'");
  ASSERT_EQ(unwritable.code, 0) << unwritable.output;
  EXPECT_NE(unwritable.output.find("compiled, not stored"), std::string::npos) << unwritable.output;
  std::filesystem::remove(file);
}

}  // namespace
