// cli_tuning_test.cpp: `fusedsample export/import/info` through the real binary,
// each test with its own cache directory.
#include <gtest/gtest.h>

#include "tests/support/cli_runner.hpp"
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace {

using Result = fusedsample::testing::CliResult;
using fusedsample::testing::run_cli;

class CliTuning : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("fs-cli-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

// `import -- FILE` takes FILE as a file even when it starts with '-'; until
// session 48 "--" was "unexpected argument '--' (options start with --)".
TEST_F(CliTuning, ImportTakesFilesAfterDoubleDash) {
  const std::string file = "-entries.json";  // relative: the command runs in dir_
  Result r = run_cli(dir_ / "a", "export --builtin --gpu 'NVIDIA H200' -o '" + (dir_ / file).string() + "'");
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string cache = (dir_ / "b").string();
  r = fusedsample::testing::run_command("cd '" + dir_.string() + "' && FUSEDSAMPLE_CACHE_DIR='" + cache +
                                        "' '" FUSEDSAMPLE_CLI "' import -- " + file);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("imported "), std::string::npos) << r.output;
}

TEST_F(CliTuning, ExportImportRoundTripShowsInInfo) {
  const auto file = dir_ / "export.json";
  Result r = run_cli(dir_ / "a", "export --builtin -o '" + file.string() + "'");
  ASSERT_EQ(r.code, 0) << r.output;
  ASSERT_TRUE(std::filesystem::exists(file));
  r = run_cli(dir_ / "b", "info");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("tuned entries          0 in"), std::string::npos) << r.output;
  r = run_cli(dir_ / "b", "import '" + file.string() + "'");
  ASSERT_EQ(r.code, 0) << r.output;
  {
    // The database's environment is where this machine measured: an import leaves it as it was (empty
    // here); until session 40 it took the imported file's.
    std::ifstream db(dir_ / "b" / "tuning.json");
    const std::string text((std::istreambuf_iterator<char>(db)), {});
    const auto env = text.find("\"environment\"");
    ASSERT_NE(env, std::string::npos) << text.substr(0, 400);
    const std::string env_text = text.substr(env, text.find('}', env) - env);
    EXPECT_NE(env_text.find("\"gpu_name\": \"\""), std::string::npos) << env_text;
  }
  r = run_cli(dir_ / "b", "info");
  EXPECT_EQ(r.output.find("tuned entries          0 in"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("NVIDIA H200 (132 SMs) bf16 V=151936 d=4096 N<=16 S=1: bf16 "), std::string::npos)
      << r.output;
  // The sample buckets of the built-in H200 table (session 37) show as such.
  EXPECT_NE(r.output.find("NVIDIA H200 (132 SMs) bf16 V=151936 d=4096 N<=16 S<=4: bf16 "), std::string::npos);
  EXPECT_NE(r.output.find("NVIDIA H200 (132 SMs) fp16 V=151936 d=4096 N<=16 S>4: fp16 "), std::string::npos);
  // Exporting the imported database gives the same entries back.
  r = run_cli(dir_ / "b", "export --gpu 'NVIDIA H200'");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("\"schema\": \"fusedsample-tuning\""), std::string::npos) << r.output.substr(0, 400);
}

TEST_F(CliTuning, ImportRefusesBadFilesWithoutTouchingTheDatabase) {
  const auto bad = dir_ / "bad.json";
  std::ofstream(bad) << "{\"schema\":\"fusedsample-tuning\",\"version\":99}";
  Result r = run_cli(dir_ / "c", "import '" + bad.string() + "'");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("version"), std::string::npos) << r.output;
  std::ofstream(bad, std::ios::trunc) << "{ not json";
  r = run_cli(dir_ / "c", "import '" + bad.string() + "'");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "c" / "tuning.json"));
  r = run_cli(dir_ / "c", "import");
  EXPECT_EQ(r.code, 2) << r.output;
  r = run_cli(dir_ / "c", "import '" + (dir_ / "missing.json").string() + "'");
  EXPECT_EQ(r.code, 1) << r.output;
}

// `export --builtin` needs no cache: with the cache disabled it writes the
// built-in table (until session 61: "the cache is disabled"); a plain export,
// which has only the user database to write, still names the disabled cache.
TEST_F(CliTuning, ExportBuiltinWithTheCacheDisabled) {
  const std::string cli = "FUSEDSAMPLE_CACHE_DISABLE=1 '" FUSEDSAMPLE_CLI "' ";
  Result r = fusedsample::testing::run_command(cli + "export --builtin --gpu 'NVIDIA H200'");
  EXPECT_EQ(r.code, 0) << r.output.substr(0, 400);
  EXPECT_NE(r.output.find("\"gpu_name\": \"NVIDIA H200\""), std::string::npos) << r.output.substr(0, 400);
  r = fusedsample::testing::run_command(cli + "export");
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("cache is disabled"), std::string::npos) << r.output;
}

}  // namespace
