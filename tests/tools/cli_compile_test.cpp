// cli_compile_test.cpp: `fusedsample compile` (no GPU needed): the spec it
// compiles carries the cluster option, a cluster the kernel cannot have is a
// usage error that names the field, the module lands in the module cache, a
// --variant flag takes the arch the Sampler compiles that variant for, and
// --emit expanded pastes in every embedded template.
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

// The flag form of the README's spec is that spec: `--arch sm_90 --variant
// mma_sync ...` starts from the sm_90 default (a wgmma spec, compiled as
// sm_90a) and, until session 41, kept its sm_90a, so it filled the cache with a
// module the Sampler never loads on an sm_90 GPU. Same spec text, same key.
TEST(CliCompile, VariantFlagTakesTheArchTheSamplerCompilesFor) {
  const auto dir = cache_dir() / "variant";
  std::filesystem::remove_all(dir);
  const std::string spec = "bf16 sm_90 mma_sync tv128 tn16 td64 s4 w4x1";
  const auto flags = run_cli(
      dir, "compile --dtype bf16 --arch sm_90 --variant mma_sync --tile-v 128 --tile-n 16 --tile-d 64 --stages 4 "
           "--warps 4x1 --cluster 1");
  ASSERT_EQ(flags.code, 0) << flags.output;
  EXPECT_NE(flags.output.find("spec           " + spec + "\n"), std::string::npos) << flags.output;
  const auto text = run_cli(dir, "compile --spec '" + spec + "'");
  ASSERT_EQ(text.code, 0) << text.output;
  auto key = [](const std::string& out) {
    const auto at = out.find("cache key");
    return at == std::string::npos ? std::string("(none)") : out.substr(at, out.find('\n', at) - at);
  };
  EXPECT_EQ(key(flags.output), key(text.output)) << flags.output << "\n" << text.output;
  // Without --arch, the default arch (sm_90); a wgmma variant goes to sm_90a, as the Sampler compiles it.
  const auto wgmma = run_cli(dir, "compile --rows 8 --variant wgmma_coop --tile-v 128 --tile-n 8 --tile-d 128 --stages 3 "
                                  "--warps 20x1 --emit source");
  EXPECT_EQ(wgmma.code, 0) << wgmma.output;
  const auto mma = run_cli(dir, "compile --rows 256 --variant mma_sync --tile-v 128 --tile-n 64 --tile-d 32 --stages 4 "
                                "--warps 4x2 --emit cubin-info");
  ASSERT_EQ(mma.code, 0) << mma.output;
  EXPECT_NE(mma.output.find("spec           bf16 sm_90 mma_sync"), std::string::npos) << mma.output;
  // From a spec text: an sm_90a wgmma spec with --variant mma_sync is the sm_90 GPU's mma_sync (sm_90); --arch
  // beside a spec is the target its variant compiles for there (a wgmma spec with --arch sm_90: sm_90a).
  const auto from_text = run_cli(dir, "compile --spec 'bf16 sm_90a wgmma tv128 tn16 td64 s4 w8x1' --variant mma_sync "
                                      "--warps 4x1 --emit source");
  EXPECT_EQ(from_text.code, 0) << from_text.output;
  const auto info = run_cli(dir, "compile --spec 'bf16 sm_90a wgmma tv128 tn16 td64 s4 w8x1' --variant mma_sync --warps 4x1");
  EXPECT_NE(info.output.find("spec           bf16 sm_90 mma_sync tv128 tn16 td64 s4 w4x1\n"), std::string::npos) << info.output;
  const auto arch = run_cli(dir, "compile --spec 'bf16 sm_90a wgmma tv128 tn16 td64 s4 w8x1' --arch sm_90");
  EXPECT_EQ(arch.code, 0) << arch.output;
  EXPECT_NE(arch.output.find("spec           bf16 sm_90a wgmma tv128 tn16 td64 s4 w8x1\n"), std::string::npos) << arch.output;
  std::filesystem::remove_all(dir);
}

// --emit expanded leaves no include of an embedded template behind, for every
// variant (README: it compiles standalone with nvcc). Until session 41 an
// include followed by a comment (wgmma_ops.cuh's of pipeline.cuh) was kept,
// and nvcc stopped at it for every wgmma variant.
TEST(CliCompile, ExpandedPastesInEveryTemplate) {
  const auto dir = cache_dir() / "expanded";
  std::filesystem::create_directories(dir);
  for (const std::string spec :
       {"bf16 sm_90 mma_sync tv128 tn16 td64 s4 w4x1", "fp32 sm_90 simt tv128 tn8 td32 s3 w4x1",
        "bf16 sm_90a wgmma tv128 tn16 td64 s4 w8x1", "bf16 sm_90a wgmma_ws tv64 tn160 td64 s4 w12x1",
        "bf16 sm_90a wgmma_coop tv256 tn128 td64 s4 w12x1 re", "bf16 sm_90a wgmma_coop tv128 tn256 td64 s4 w12x1 sk re"}) {
    SCOPED_TRACE(spec);
    const auto file = dir / "unit.cu";
    const auto r = run_cli(dir, "compile --spec '" + spec + "' --emit expanded -o " + file.string());
    ASSERT_EQ(r.code, 0) << r.output;
    std::ifstream in(file);
    std::string line, left;
    int templates = 0;
    while (std::getline(in, line)) {
      const auto first = line.find_first_not_of(" \t");
      if (first != std::string::npos && line.compare(first, 1, "#") == 0 && line.find("include") != std::string::npos &&
          line.find('"') != std::string::npos)
        left += line + "\n";
      if (line.starts_with("// ---- begin ")) ++templates;
    }
    EXPECT_EQ(left, "") << "quoted includes left in the expanded unit";
    EXPECT_GE(templates, 5) << "templates pasted in";
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
