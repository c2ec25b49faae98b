// nvrtc_cache_key_test.cpp: the compiled kernel's cache key is stable, and
// changes with the source, the options (their order and boundaries too) and
// the arch; distinct default specs get distinct keys. No GPU needed.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <utility>

#include "fusedsample/compiler.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "tests/support/nvrtc_test_specs.hpp"

namespace fs = fusedsample;

namespace {

using namespace fusedsample::testing::nvrtc_tests;

// The key carries NVRTC's build, not only its major.minor (until session 40 a
// toolkit patch release within 13.0 kept every key, and with it the older
// ptxas's cubins).
TEST(NvrtcCacheKey, CarriesTheNvrtcBuild) {
  const std::string build = fs::nvrtc_build();
  EXPECT_TRUE(std::regex_search(build, std::regex("CL-[0-9]+"))) << build;
  EXPECT_NE(build.find("V" + fs::nvrtc_version() + "."), std::string::npos) << build;
  const fs::RenderedKernel r = fs::render_kernel(fs::default_spec(DType::bf16, Arch::sm_90, 16));
  EXPECT_EQ(fs::kernel_cache_key(r), fs::kernel_cache_key(r, fs::nvrtc_version(), build));
  // Two patch releases of one major.minor.
  EXPECT_NE(fs::kernel_cache_key(r, "13.0", "CL-36424714; release 13.0, V13.0.88"),
            fs::kernel_cache_key(r, "13.0", "CL-36000000; release 13.0, V13.0.48"));
  EXPECT_NE(fs::kernel_cache_key(r, "13.0", build), fs::kernel_cache_key(r, "13.1", build));
}

TEST(NvrtcCacheKey, StableAndSensitive) {
  const KernelSpec s = fs::default_spec(DType::bf16, Arch::sm_90, 16);
  const fs::RenderedKernel r = fs::render_kernel(s);
  const std::string key = fs::kernel_cache_key(r);
  EXPECT_TRUE(std::regex_match(key, std::regex("[0-9a-f]{32}"))) << key;
  EXPECT_EQ(fs::kernel_cache_key(r), key);
  EXPECT_EQ(fs::kernel_cache_key(fs::render_kernel(s)), key);

  std::set<std::string> keys = {key};
  fs::RenderedKernel t = r;
  t.source += "\n// changed\n";
  EXPECT_TRUE(keys.insert(fs::kernel_cache_key(t)).second) << "source change";
  t = r;
  t.options.push_back("-lineinfo");
  EXPECT_TRUE(keys.insert(fs::kernel_cache_key(t)).second) << "added option";
  t = r;
  t.options.back() += "x";
  EXPECT_TRUE(keys.insert(fs::kernel_cache_key(t)).second) << "changed option";
  t = r;
  std::swap(t.options.front(), t.options.back());
  EXPECT_TRUE(keys.insert(fs::kernel_cache_key(t)).second) << "reordered options";
  t = r;
  t.spec.arch = Arch::sm_80;  // the arch alone, options untouched
  EXPECT_TRUE(keys.insert(fs::kernel_cache_key(t)).second) << "arch change";
  // Field boundaries are unambiguous: moving text between option strings changes the key.
  t = r;
  t.options = {"ab", "c"};
  fs::RenderedKernel u = r;
  u.options = {"a", "bc"};
  EXPECT_NE(fs::kernel_cache_key(t), fs::kernel_cache_key(u));
  // Distinct specs render to distinct keys; equal specs to equal keys.
  std::map<std::string, std::string> key_of_spec;
  std::set<std::string> spec_keys;
  for (Arch a : kArchs)
    for (DType d : {DType::bf16, DType::fp16, DType::fp32})
      for (std::int64_t rows : {1, 16, 64, 1024}) {
        const KernelSpec v = fs::default_spec(d, a, rows);
        const std::string k = fs::kernel_cache_key(fs::render_kernel(v));
        auto [it, fresh] = key_of_spec.emplace(v.to_string(), k);
        if (fresh) {
          EXPECT_TRUE(spec_keys.insert(k).second) << "key collision for " << v.to_string();
        } else {
          EXPECT_EQ(it->second, k) << v.to_string();
        }
        if (v == s) {
          EXPECT_EQ(k, key);
        }
      }
  EXPECT_EQ(spec_keys.size(), key_of_spec.size());
  EXPECT_GE(spec_keys.size(), 20u);
}

// The logits kernel's binary does not depend on the storage dtype or T_d (it
// reads fp32 logits): specs that differ only there share one key and one memo
// entry. Until session 60 a bf16 and an fp16 Sampler compiled and cached the
// same cubin twice. Its stages (a ring of staged tiles since session 62) do
// change it.
TEST(NvrtcCacheKey, LogitsSpecsDifferingOnlyInUnusedFieldsShareOneBinary) {
  const KernelSpec base = KernelSpec::parse("bf16 sm_90 logits tv256 tn8 td64 s4 w4x1");
  auto key = [](const KernelSpec& s) { return fs::kernel_cache_key(fs::render_kernel(fs::binary_spec(s)), "13.0", "probe"); };
  for (const char* other : {"fp16 sm_90 logits tv256 tn8 td64 s4 w4x1", "fp32 sm_90 logits tv256 tn8 td64 s4 w4x1",
                            "bf16 sm_90 logits tv256 tn8 td32 s4 w4x1"}) {
    const KernelSpec s = KernelSpec::parse(other);
    EXPECT_EQ(fs::binary_spec(s).to_string(), fs::binary_spec(base).to_string()) << other;  // the memo's key
    EXPECT_EQ(key(s), key(base)) << other;
  }
  EXPECT_NE(key(KernelSpec::parse("bf16 sm_90 logits tv128 tn8 td64 s4 w4x1")), key(base));
  EXPECT_NE(key(KernelSpec::parse("bf16 sm_90 logits tv256 tn8 td64 s2 w4x1")), key(base));
  EXPECT_NE(key(KernelSpec::parse("bf16 sm_86 logits tv256 tn8 td64 s4 w4x1")), key(base));
  // The other variants keep their dtype, T_d and stages.
  const KernelSpec mma = KernelSpec::parse("bf16 sm_90 mma_sync tv128 tn16 td64 s4 w4x1");
  EXPECT_NE(key(mma), key(KernelSpec::parse("fp16 sm_90 mma_sync tv128 tn16 td64 s4 w4x1")));
  EXPECT_NE(key(mma), key(KernelSpec::parse("bf16 sm_90 mma_sync tv128 tn16 td32 s4 w4x1")));
}

}  // namespace
