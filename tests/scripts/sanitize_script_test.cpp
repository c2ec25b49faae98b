// sanitize_script_test.cpp: scripts/sanitize_gpu.sh runs compute-sanitizer on
// the GPU machine over one forced spec of each kernel variant. Its list is
// text in a shell script, so a change to the spec rules could leave it naming
// specs the library refuses, found only when a device call fails. Every spec
// it lists must parse and validate here, and the list must keep one spec of
// each variant and of the register epilogue's forms.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fusedsample/kernel_spec.hpp"

namespace {

namespace fs = fusedsample;

std::vector<std::string> listed_specs() {
  std::ifstream in(std::string(FUSEDSAMPLE_SOURCE_DIR) + "/scripts/sanitize_gpu.sh");
  std::stringstream text;
  text << in.rdbuf();
  // Lines of the specs array: "ROWS|SPEC|EXTRA".
  const std::regex entry(R"re(^\s*"(\d+)\|([^|"]+)\|[^"]*"\s*$)re");
  std::vector<std::string> specs;
  std::string line;
  while (std::getline(text, line)) {
    std::smatch m;
    if (std::regex_match(line, m, entry)) specs.push_back(m[2]);
  }
  return specs;
}

TEST(SanitizeScript, EverySpecItListsIsValid) {
  const auto specs = listed_specs();
  ASSERT_GE(specs.size(), 10u) << "scripts/sanitize_gpu.sh: the specs array was not found";
  std::set<std::string> variants;
  bool re = false, re_pp = false, sk_re = false, cluster = false, l2 = false;
  for (const auto& text : specs) {
    SCOPED_TRACE(text);
    fs::KernelSpec spec;
    ASSERT_NO_THROW(spec = fs::KernelSpec::parse(text));
    EXPECT_NO_THROW(spec.validate());
    variants.insert(std::string(fs::to_string(spec.variant)));
    re |= spec.reg_epilogue;
    re_pp |= spec.reg_epilogue && spec.ping_pong;
    sk_re |= spec.reg_epilogue && spec.stream_k;
    cluster |= spec.cluster > 1;
    l2 |= spec.stage_in_l2;
  }
  EXPECT_EQ(variants.size(), 5u) << "one spec of each variant: simt, mma_sync, wgmma, wgmma_ws, wgmma_coop";
  EXPECT_TRUE(re && re_pp && sk_re && cluster && l2);
}

}  // namespace
