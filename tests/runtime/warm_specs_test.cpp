// warm_specs_test.cpp: the GPU tests' opt-in warm-up list (tests/support/
// warm_specs.hpp) holds every forced config once, resolved to the arch a
// Sampler on that device compiles for: wgmma specs sm_90a and only on
// compute capability 9.0, the others the device's own arch. No GPU needed.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tests/support/warm_specs.hpp"

namespace fusedsample {
namespace {

TEST(WarmSpecs, EveryForcedConfigOnceOnTheDevicesArch) {
  const std::vector<KernelSpec> hopper = testing::warm_specs(9, 0);
  std::set<std::string> texts;
  std::size_t wgmma = 0, logits = 0;
  for (const KernelSpec& s : hopper) {
    SCOPED_TRACE(s.to_string());
    EXPECT_TRUE(texts.insert(s.to_string()).second) << "listed twice";
    EXPECT_NO_THROW(s.validate());
    if (is_wgmma(s.variant)) {
      ++wgmma;
      EXPECT_EQ(s.arch, Arch::sm_90a);
    } else {
      EXPECT_EQ(s.arch, Arch::sm_90);
    }
    logits += s.variant == Variant::logits ? 1 : 0;
  }
  std::set<std::string> forced;
  for (DType dtype : {DType::bf16, DType::fp16, DType::fp32})
    for (const KernelSpec& s : testing::forced_specs(dtype)) forced.insert(s.to_string());
  EXPECT_EQ(hopper.size(), forced.size() + 5);  // every forced config, and the five forced logits configs
  EXPECT_EQ(logits, 5u);
  EXPECT_GT(wgmma, 50u);

  // An A100 compiles no wgmma spec, and the others for sm_80.
  const std::vector<KernelSpec> ampere = testing::warm_specs(8, 0);
  EXPECT_EQ(ampere.size(), hopper.size() - wgmma);
  for (const KernelSpec& s : ampere) {
    EXPECT_FALSE(is_wgmma(s.variant)) << s.to_string();
    EXPECT_EQ(s.arch, Arch::sm_80) << s.to_string();
  }
}

}  // namespace
}  // namespace fusedsample
