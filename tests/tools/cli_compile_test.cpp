// cli_compile_test.cpp: `fusedsample compile` with the cluster option (no GPU
// needed): the spec it compiles carries the cluster, and a cluster the kernel
// cannot have is a usage error that names the field.
#include <gtest/gtest.h>

#include <filesystem>
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

}  // namespace
