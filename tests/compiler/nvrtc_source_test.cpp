// nvrtc_source_test.cpp: the rendered kernel source: it includes only
// embedded templates (what the device compiler sees of its includes), the
// embedded copies are the source tree's, it fixes the spec in its macros and
// options, and invalid specs do not render. No GPU needed.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fusedsample/compiler.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "tests/support/nvrtc_test_specs.hpp"

namespace fs = fusedsample;

namespace {

using namespace fusedsample::testing::nvrtc_tests;

// Names in `#include "x"` / `#include <x>` lines that the device compiler
// sees. Branches only taken by the host compiler (`#else` of `#if
// defined(__CUDACC__)`, `#ifndef __CUDACC__`, `#if !defined(__CUDACC__)`)
// are skipped: NVRTC defines __CUDACC__.
std::vector<std::string> device_includes(const std::string& text) {
  static const std::regex include_re(R"(^\s*#\s*include\s*([<"])([^">]+)[">])");
  static const std::regex if_cuda_re(R"(^\s*#\s*(if\s+defined\s*\(?\s*__CUDACC__\s*\)?|ifdef\s+__CUDACC__)\b)");
  static const std::regex if_not_cuda_re(R"(^\s*#\s*(if\s+!\s*defined\s*\(?\s*__CUDACC__\s*\)?|ifndef\s+__CUDACC__)\b)");
  static const std::regex if_re(R"(^\s*#\s*if)");
  static const std::regex else_re(R"(^\s*#\s*(else|elif)\b)");
  static const std::regex endif_re(R"(^\s*#\s*endif\b)");
  // Stack of conditionals: +1 device-only branch live, -1 host-only, 0 other.
  struct Cond {
    int kind;      // 1: #if __CUDACC__, -1: #if !__CUDACC__, 0: other
    bool in_else;  // past #else
  };
  std::vector<Cond> stack;
  auto host_only = [&] {
    for (const Cond& c : stack)
      if ((c.kind == 1 && c.in_else) || (c.kind == -1 && !c.in_else)) return true;
    return false;
  };
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, if_cuda_re)) stack.push_back({1, false});
    else if (std::regex_search(line, if_not_cuda_re)) stack.push_back({-1, false});
    else if (std::regex_search(line, if_re)) stack.push_back({0, false});
    else if (std::regex_search(line, else_re)) {
      if (!stack.empty()) stack.back().in_else = true;
    } else if (std::regex_search(line, endif_re)) {
      if (!stack.empty()) stack.pop_back();
    } else if (std::regex_search(line, m, include_re) && !host_only()) {
      out.push_back(std::string(m[1]) + std::string(m[2]));
    }
  }
  return out;
}

TEST(NvrtcSource, IncludeParserSkipsHostOnlyBranches) {
  const std::string text =
      "#include \"a.cuh\"\n#if defined(__CUDACC__)\n#include \"b.cuh\"\n#else\n#include <cmath>\n#endif\n"
      "#ifndef __CUDACC__\n#include <cstring>\n#endif\n#if FOO\n#include \"c.cuh\"\n#else\n#include <d>\n#endif\n";
  EXPECT_EQ(device_includes(text), (std::vector<std::string>{"\"a.cuh", "\"b.cuh", "\"c.cuh", "<d"}));
}

TEST(NvrtcSource, IncludesOnlyEmbeddedTemplates) {
  std::set<std::string> embedded;
  for (const auto& f : fs::embedded_templates()) {
    EXPECT_TRUE(embedded.insert(f.name).second) << "duplicate embedded name " << f.name;
    EXPECT_EQ(std::string(f.data, f.size).size(), std::strlen(f.data)) << f.name << ": embedded size/NUL mismatch";
  }
  // Every template in the source tree is embedded, byte for byte.
  std::size_t on_disk = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(FUSEDSAMPLE_SOURCE_DIR) / "templates")) {
    if (e.path().extension() != ".cuh") continue;
    ++on_disk;
    const std::string name = e.path().filename().string();
    ASSERT_TRUE(embedded.count(name)) << name << " is not embedded";
    std::ifstream f(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    for (const auto& t : fs::embedded_templates()) {
      if (name == t.name) {
        EXPECT_TRUE(std::string(t.data, t.size) == ss.str()) << name << " differs from its embedded copy (stale build?)";
      }
    }
  }
  EXPECT_EQ(on_disk, embedded.size());

  auto check = [&](const std::string& where, const std::string& text) {
    for (const std::string& inc : device_includes(text)) {
      EXPECT_EQ(inc[0], '"') << where << " includes system header <" << inc.substr(1) << ">";
      EXPECT_TRUE(embedded.count(inc.substr(1))) << where << " includes '" << inc.substr(1) << "', not embedded";
    }
  };
  for (const auto& f : fs::embedded_templates()) check(f.name, std::string(f.data, f.size));
  for (DType d : {DType::bf16, DType::fp16, DType::fp32})
    for (Variant v : {fs::default_variant(d), Variant::logits}) {
      KernelSpec s = fs::default_spec(d, Arch::sm_90, 16);
      s.variant = v;
      const fs::RenderedKernel r = fs::render_kernel(s);
      const auto incs = device_includes(r.source);
      EXPECT_FALSE(incs.empty());
      check("rendered " + s.to_string(), r.source);
    }
}

TEST(NvrtcSource, RenderRejectsInvalidSpecs) {
  KernelSpec s = fs::default_spec(DType::bf16, Arch::sm_90, 1);
  s.tile_v = 24;
  EXPECT_THROW(fs::render_kernel(s), fs::InvalidArgument);
  s = fs::default_spec(DType::fp32, Arch::sm_90, 1);
  s.variant = Variant::mma_sync;
  EXPECT_THROW(fs::render_kernel(s), fs::Unsupported);
}

TEST(NvrtcSource, RenderedSourceFixesTheSpec) {
  const KernelSpec s = make_spec(DType::fp16, Variant::mma_sync, Arch::sm_90a, 256, 32, 64, 3, 4, 2);
  const fs::RenderedKernel r = fs::render_kernel(s);
  for (const char* needle : {"#define FS_TV 256", "#define FS_TN 32", "#define FS_TD 64", "#define FS_STAGES 3",
                             "#define FS_WARPS_M 4", "#define FS_WARPS_N 2", "FS_DTYPE_F16"})
    EXPECT_NE(r.source.find(needle), std::string::npos) << needle;
  bool arch_option = false;
  for (const auto& o : r.options) arch_option |= o.find("sm_90a") != std::string::npos;
  EXPECT_TRUE(arch_option);
  EXPECT_STRNE(fs::generator_version(), "");
  EXPECT_TRUE(std::regex_match(fs::nvrtc_version(), std::regex(R"(\d+\.\d+)"))) << fs::nvrtc_version();
}

}  // namespace
