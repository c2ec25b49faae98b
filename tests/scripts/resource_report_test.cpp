// resource_report_test.cpp: scripts/resource_report.py, which makes
// BENCHMARKS.md's resource report of the built-in tables' picks, on a small
// table written here: each bucket's pick is the config the runtime's lookup
// takes (an interleaved timing before a faster flushed one), specs that
// differ only in l2pN are one binary, and the columns come from `fusedsample
// compile`.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/cli_runner.hpp"

namespace {

namespace fsys = std::filesystem;
using fusedsample::testing::run_command;

std::string entry(int bucket, const std::string& configs) {
  return R"({"bucket": ")" + std::to_string(bucket) +
         R"(", "compute_capability": "8.0", "d_model": 4096, "dtype": "bf16", "gpu_name": "NVIDIA Test GPU",
             "multiprocessors": 108, "vocab": 32000, "configs": [)" + configs + "]}";
}

std::string config(const std::string& spec, double median, const char* method) {
  return R"({"floor_us": 100, "median_us": )" + std::to_string(median) + R"(, "method": ")" + method +
         R"(", "spec": ")" + spec + R"(", "timestamp": "2026-11-29T00:00:00Z"})";
}

TEST(ResourceReport, ReportsWhatTheLookupPicks) {
  if (run_command("python3 --version").code != 0) GTEST_SKIP() << "python3 is not installed: resource_report.py needs it";
  std::string tmpl = (fsys::temp_directory_path() / "fs-resource-report-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const fsys::path dir = tmpl, json = dir / "table.json";
  const std::string picked = "bf16 sm_80 mma_sync tv64 tn8 td64 s2 w4x1";
  const std::string faster_flushed = "bf16 sm_80 mma_sync tv128 tn8 td64 s2 w4x1";
  const std::string coop = "bf16 sm_90a wgmma_coop tv128 tn8 td128 s3 w20x1";
  std::ofstream(json) << R"({"schema": "fusedsample-tuning", "version": 1, "entries": [)"
                      << entry(1, config(faster_flushed, 10.0, "flushed") + "," + config(picked, 20.0, "interleaved"))
                      << "," << entry(2, config(coop, 10.0, "flushed")) << ","
                      << entry(4, config(coop + " l2p0", 10.0, "flushed")) << "]}";
  const auto r = run_command("cd '" + std::string(FUSEDSAMPLE_SOURCE_DIR) + "' && FUSEDSAMPLE_CLI='" + FUSEDSAMPLE_CLI +
                             "' python3 scripts/resource_report.py '" + json.string() + "'");
  std::error_code ec;
  fsys::remove_all(dir, ec);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("| `" + picked + "` | 128 | "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(faster_flushed), std::string::npos) << "a flushed timing beat an interleaved one:\n" << r.output;
  EXPECT_NE(r.output.find("| `" + coop + "` / `" + coop + " l2p0` | 640 | "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Test GPU 32000x4096 N=2; Test GPU 32000x4096 N=4"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("registers, 0 bytes stack"), std::string::npos) << r.output;
}

}  // namespace
