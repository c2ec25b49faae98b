// cli_demo_test.cpp: `fusedsample demo`, the README's main job, end to end at
// a small shape. Without a GPU it compiles, prints the CPU reference's
// samples of the checked rows and says why the GPU part was skipped; on a GPU
// it prints the GPU's samples and checks every (row, sample) against the
// reference with no mismatch. Either way every row's line holds one valid
// token index per sample, and the exit code is 0.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>
#include <string>

#include <unistd.h>

#include "tests/support/cli_runner.hpp"

namespace {

using fusedsample::testing::run_cli;

// --temperature -0 is greedy and printed as 0 (until session 48 "temperature=-0").
TEST(CliDemo, NegativeZeroTemperatureIsGreedy) {
  const auto dir = std::filesystem::temp_directory_path() / ("fs-cli-demo0-" + std::to_string(::getpid()));
  const auto r = run_cli(dir, "demo --vocab 3001 --hidden 128 --rows 1 --temperature -0 --check-rows 1 --iters 1");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find(" temperature=0 "), std::string::npos) << r.output;
}

TEST(CliDemo, RunsTheReadmeJobAtASmallShape) {
  const auto dir = std::filesystem::temp_directory_path() / ("fs-cli-demo-" + std::to_string(::getpid()));
  const int V = 3001, rows = 4, samples = 2;
  const auto r = run_cli(dir, "demo --vocab " + std::to_string(V) + " --hidden 128 --rows " + std::to_string(rows) +
                                  " --samples " + std::to_string(samples) + " --check-rows 4 --iters 2");
  EXPECT_EQ(r.code, 0) << r.output;
  const bool gpu = r.output.find("GPU execution skipped: ") == std::string::npos;
  if (!gpu) EXPECT_NE(r.output.find("compiled ["), std::string::npos) << r.output;
  ASSERT_NE(r.output.find(gpu ? "GPU samples (row: token indices)" : "CPU reference samples (row: token indices)"),
            std::string::npos)
      << r.output;

  // "  row k: i j" for k = 0 .. rows-1, each with `samples` indices in [0, V).
  const std::regex row_line(R"(^  row (\d+):((?: \d+)+)$)");
  std::istringstream lines(r.output);
  std::string line;
  int next_row = 0;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, row_line)) continue;
    EXPECT_EQ(std::stoi(m[1]), next_row) << line;
    ++next_row;
    std::istringstream idx(m[2].str());
    int count = 0;
    for (long long v; idx >> v; ++count) EXPECT_TRUE(v >= 0 && v < V) << line;
    EXPECT_EQ(count, samples) << line;
  }
  EXPECT_EQ(next_row, rows) << r.output;

  if (!gpu) {
    EXPECT_EQ(r.output.find("mismatch"), std::string::npos) << r.output;
  } else {  // on a GPU: every pair checked, none disagrees
    EXPECT_NE(r.output.find(std::to_string(rows * samples) + " (row, sample) pairs"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(" 0 mismatches"), std::string::npos) << r.output;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
