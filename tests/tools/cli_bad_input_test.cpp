// cli_bad_input_test.cpp: the `fusedsample` tool given input that once
// crashed it, was read wrapped, or ended in exit code 0 (session 31's review):
// each now ends in a message naming the problem and a non-zero exit code.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/cli_runner.hpp"

namespace {

using fusedsample::testing::run_cli;
using fusedsample::testing::run_command;
namespace fsys = std::filesystem;

class CliBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fsys::temp_directory_path() / (std::string("fs-cli-bad-") + info->name() + "-" + std::to_string(::getpid()));
    fsys::remove_all(dir_);
    fsys::create_directories(dir_);
  }
  void TearDown() override { fsys::remove_all(dir_); }
  fsys::path dir_;
};

// w65536x65536: the product wrapped to 0 in int, passed validation, and the
// simt check divided by it (SIGFPE; the same through --spec, --warps, tune
// --also, demo --spec and import).
TEST_F(CliBadInput, WarpCountsWhoseProductOverflows) {
  auto r = run_cli(dir_, "compile --spec 'fp32 sm_90 simt tv128 tn64 td32 s3 w65536x65536'");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("warps_m * warps_n"), std::string::npos) << r.output;
  r = run_cli(dir_, "compile --dtype fp32 --warps 65536x65536");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("warps_m * warps_n"), std::string::npos) << r.output;
  // sscanf's %d read 4294967300 as 4: accepted as w4x1.
  r = run_cli(dir_, "compile --dtype fp32 --warps 4294967300x1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--warps"), std::string::npos) << r.output;
  for (const char* bad : {"4x", "x1", "4x1x", "4y1", "-4x1", "4x-1", "0x1"}) {
    r = run_cli(dir_, std::string("compile --dtype fp32 --warps '") + bad + "'");
    EXPECT_EQ(r.code, 2) << bad << ": " << r.output;
  }
}

// An empty -o is a bad command line naming the option (exit 2), as README's
// exit codes say; until session 60 it was exit 1 with a temp file's failed
// rename ("cannot rename ./.tmp.X to : No such file or directory").
TEST_F(CliBadInput, EmptyOutputFileName) {
  for (const char* args : {"compile -o ''", "compile --emit source --output ''", "export -o ''"}) {
    const auto r = run_cli(dir_, args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find("--output"), std::string::npos) << args << ": " << r.output;
    EXPECT_EQ(r.output.find(".tmp."), std::string::npos) << args << ": " << r.output;
  }
}

// A temperature too small for fp32's range was sampled (1e-39: every positive
// logit scored +inf) or read as greedy (1e-50 rounds to 0).
TEST_F(CliBadInput, TemperatureBelowTheSmallestSupported) {
  for (const char* tau : {"1e-39", "1e-50", "1e-30"}) {
    const auto r = run_cli(dir_, std::string("demo --vocab 1000 --hidden 64 --temperature ") + tau);
    EXPECT_EQ(r.code, 2) << tau << ": " << r.output;
    EXPECT_NE(r.output.find("2^-64"), std::string::npos) << r.output;
  }
}

// A number strtod reads but out of a double's range, or led by white space:
// --temperature 1e-400 underflowed to 0 and sampled greedily, --budget 1e-400
// meant "no budget", and ' 5' was read as 5 where the integer options refuse
// it (session 61's review).
TEST_F(CliBadInput, NumbersOutOfADoublesRangeOrLedBySpace) {
  for (const char* args : {"demo --vocab 1000 --hidden 64 --temperature 1e-400",
                           "demo --vocab 1000 --hidden 64 --temperature -1e-400",
                           "demo --vocab 1000 --hidden 64 --temperature ' 1'", "tune --budget 1e-400",
                           "tune --budget ' 5'", "tune --budget 1e400"}) {
    const auto r = run_cli(dir_, args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.output;
    EXPECT_NE(r.output.find("invalid value"), std::string::npos) << args << ": " << r.output;
  }
}

// demo --arch beside --spec, without a GPU: it was ignored (the spec's arch
// compiled, exit 0); now it replaces the spec's arch as in `compile`, and an
// arch the spec's variant cannot have is a usage error naming both. With a
// GPU --arch is not used (the GPU's arch is): both runs sample, exit 0.
TEST_F(CliBadInput, DemoArchBesideSpec) {
  auto r = run_cli(dir_, "demo --vocab 1000 --hidden 64 --rows 2 --arch sm_80 --spec 'bf16 sm_90 mma_sync tv128 tn8 td64 s3 w4x1'");
  EXPECT_EQ(r.code, 0) << r.output;
  const bool gpu = r.output.find("GPU execution skipped") == std::string::npos;
  if (!gpu) EXPECT_NE(r.output.find("[bf16 sm_80 mma_sync tv128 tn8 td64 s3 w4x1]"), std::string::npos) << r.output;
  r = run_cli(dir_, "demo --vocab 1000 --hidden 64 --rows 2 --arch sm_80 --spec 'bf16 sm_90a wgmma_coop tv128 tn8 td128 s3 w20x1'");
  if (gpu) {
    EXPECT_EQ(r.code, 0) << r.output;
  } else {
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("--arch sm_80"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("sm_90a"), std::string::npos) << r.output;
  }
}

// A number past a double in a tuning file: the error named neither the file
// nor the field; in the cache's tuning.json it stopped every command.
TEST_F(CliBadInput, TuningFileWithAnOutOfRangeNumber) {
  const fsys::path cache = dir_ / "cache";
  const fsys::path bad = dir_ / "bad.json";
  std::ofstream(bad) << R"({"schema": "fusedsample-tuning", "version": 1, "entries": [], "x": 1e400})";
  auto r = run_cli(cache, "import '" + bad.string() + "'");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find(bad.string()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1e400"), std::string::npos) << r.output;
  fsys::create_directories(cache);
  fsys::copy_file(bad, cache / "tuning.json");
  r = run_cli(cache, "export");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("ignoring corrupt tuning database"), std::string::npos) << r.output;
  r = run_cli(dir_, "import '" + dir_.string() + "'");  // a directory
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("is a directory"), std::string::npos) << r.output;
}

// Output that could not be written (a full disk) ended in exit code 0.
TEST_F(CliBadInput, StdoutThatCannotBeWritten) {
  if (!fsys::exists("/dev/full")) GTEST_SKIP() << "this machine has no /dev/full";
  const std::string cli = "FUSEDSAMPLE_CACHE_DIR='" + dir_.string() + "' '" FUSEDSAMPLE_CLI "'";
  for (const char* args : {"export", "compile --spec 'bf16 sm_90 mma_sync tv128 tn8 td128 s2 w4x1' --emit source",
                           "--help"}) {
    const auto r = run_command("(" + cli + " " + args + " >/dev/full)");
    EXPECT_EQ(r.code, 1) << args << ": " << r.output;
    EXPECT_NE(r.output.find("cannot write to standard output"), std::string::npos) << args << ": " << r.output;
  }
}

// `compile -o FILE` that could not be written: until session 48 the stream
// was checked before its buffer was flushed, so an output smaller than the
// buffer (every --emit source) that failed ended in exit code 0.
TEST_F(CliBadInput, CompileOutputFileThatCannotBeWritten) {
  if (!fsys::exists("/dev/full")) GTEST_SKIP() << "this machine has no /dev/full";
  for (const char* emit : {"source", "cubin-info"}) {
    const auto r = run_cli(dir_, std::string("compile --spec 'bf16 sm_90 mma_sync tv128 tn8 td128 s2 w4x1' --emit ") +
                                     emit + " -o /dev/full");
    EXPECT_EQ(r.code, 1) << emit << ": " << r.output;
    EXPECT_NE(r.output.find("/dev/full"), std::string::npos) << emit << ": " << r.output;
  }
}

// Without a driver: the toolkit's stub libcuda.so named no error ("cuInit
// failed with 34") and an empty FUSEDSAMPLE_LIBCUDA was blamed for loading
// libcuda.so.1 until session 48.
TEST_F(CliBadInput, NoDriverMessagesNameTheCause) {
  const std::string cli = "FUSEDSAMPLE_CACHE_DIR='" + dir_.string() + "' ";
  auto r = run_command(cli + "FUSEDSAMPLE_LIBCUDA= '" FUSEDSAMPLE_CLI "' info");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("[from FUSEDSAMPLE_LIBCUDA]"), std::string::npos) << r.output;
  const std::string stub = std::string(FUSEDSAMPLE_CUDA_LIB_DIR) + "/stubs/libcuda.so";
  if (!fsys::exists(stub)) GTEST_SKIP() << "no CUDA toolkit stub at " << stub;
  r = run_command(cli + "FUSEDSAMPLE_LIBCUDA='" + stub + "' '" FUSEDSAMPLE_CLI "' info");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("CUDA_ERROR_STUB_LIBRARY"), std::string::npos) << r.output;
}

// Arguments after help or --version were ignored (exit 0) until session 40;
// `help COMMAND` is the command's --help.
TEST_F(CliBadInput, HelpAndVersionTakeNoStrayArguments) {
  const struct {
    const char* args;
    const char* named;
  } cases[] = {{"--version --bogus", "--bogus"}, {"help bogus", "unknown command 'bogus'"}, {"--help tune", "tune"},
               {"-h x", "'x'"}, {"help tune demo", "'demo'"}, {"help help", "unknown command 'help'"}};
  for (const auto& c : cases) {
    const auto r = run_cli(dir_, c.args);
    EXPECT_EQ(r.code, 2) << c.args << ": " << r.output;
    EXPECT_NE(r.output.find(c.named), std::string::npos) << c.args << ": " << r.output;
  }
  const auto tune = run_cli(dir_, "help tune");
  EXPECT_EQ(tune.code, 0) << tune.output;
  EXPECT_NE(tune.output.find("usage: fusedsample tune"), std::string::npos) << tune.output;
  EXPECT_EQ(run_cli(dir_, "--version").code, 0);
  // export to standard output ends in one newline (it printed two).
  const auto out = run_cli(dir_, "export 2>/dev/null");
  ASSERT_EQ(out.code, 0) << out.output;
  ASSERT_GE(out.output.size(), 2u);
  EXPECT_EQ(out.output.back(), '\n');
  EXPECT_NE(out.output[out.output.size() - 2], '\n') << "two newlines at the end";
}

}  // namespace
