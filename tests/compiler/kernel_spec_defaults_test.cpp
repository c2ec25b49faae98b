// kernel_spec_defaults_test.cpp: the arch a variant compiles for, the arch
// of a compute capability, and the built-in default specs (valid for every
// dtype, arch and batch, and within the arch's shared memory).
#include <gtest/gtest.h>

#include <cstdint>

#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "tests/support/kernel_spec_checks.hpp"

namespace fs = fusedsample;

namespace {

using namespace fusedsample::testing::kernel_spec_tests;

// wgmma needs the arch-specific sm_90a target: the runtime compiles it for
// sm_90a on an sm_90 device and leaves every other combination alone.
// The arch the Sampler compiles a forced or tuned spec for: a wgmma spec keeps
// sm_90a wherever it runs (off Hopper the launch refuses it), a wgmma spec of
// another arch and every other spec take the device's (then target_arch): a
// forced `sm_90a mma_sync` kept sm_90a until session 60 and failed off Hopper.
TEST(KernelSpec, CompileArch) {
  EXPECT_EQ(fs::compile_arch(Variant::wgmma_coop, Arch::sm_90a, Arch::sm_90), Arch::sm_90a);
  EXPECT_EQ(fs::compile_arch(Variant::wgmma_coop, Arch::sm_90a, Arch::sm_80), Arch::sm_90a);
  EXPECT_EQ(fs::compile_arch(Variant::wgmma, Arch::sm_80, Arch::sm_90), Arch::sm_90a);
  EXPECT_EQ(fs::compile_arch(Variant::wgmma_ws, Arch::sm_90, Arch::sm_86), Arch::sm_86);
  EXPECT_EQ(fs::compile_arch(Variant::mma_sync, Arch::sm_90a, Arch::sm_80), Arch::sm_80);
  EXPECT_EQ(fs::compile_arch(Variant::mma_sync, Arch::sm_90a, Arch::sm_90), Arch::sm_90);
  EXPECT_EQ(fs::compile_arch(Variant::logits, Arch::sm_80, Arch::sm_90), Arch::sm_90);
  EXPECT_EQ(fs::compile_arch(Variant::simt, Arch::sm_90, Arch::sm_89), Arch::sm_89);
}

TEST(KernelSpec, TargetArch) {
  EXPECT_EQ(fs::target_arch(Variant::wgmma, Arch::sm_90), Arch::sm_90a);
  EXPECT_EQ(fs::target_arch(Variant::wgmma, Arch::sm_90a), Arch::sm_90a);
  EXPECT_EQ(fs::target_arch(Variant::wgmma, Arch::sm_80), Arch::sm_80);  // then validate() refuses it
  EXPECT_EQ(fs::target_arch(Variant::wgmma_ws, Arch::sm_90), Arch::sm_90a);
  EXPECT_EQ(fs::target_arch(Variant::wgmma_coop, Arch::sm_90), Arch::sm_90a);
  EXPECT_TRUE(fs::uses_tma(Variant::wgmma_ws));
  EXPECT_TRUE(fs::uses_tma(Variant::wgmma_coop));
  EXPECT_FALSE(fs::uses_tma(Variant::wgmma));
  EXPECT_FALSE(fs::uses_tma(Variant::mma_sync));
  EXPECT_EQ(fs::target_arch(Variant::wgmma_ws, Arch::sm_86), Arch::sm_86);
  EXPECT_EQ(fs::target_arch(Variant::mma_sync, Arch::sm_90), Arch::sm_90);
  EXPECT_EQ(fs::target_arch(Variant::simt, Arch::sm_86), Arch::sm_86);
}

TEST(KernelSpec, DefaultSpecIsValidForEveryDTypeArchAndBatch) {
  for (DType d : kDTypes)
    for (Arch a : kArchs)
      for (std::int64_t rows = 1; rows <= 1024; ++rows) {
        const KernelSpec s = fs::default_spec(d, a, rows);
        ASSERT_NO_THROW(s.validate()) << fs::to_string(d) << " " << fs::to_string(a) << " rows " << rows << ": "
                                      << s.to_string();
        ASSERT_EQ(s.dtype, d);
        const bool hopper = (a == Arch::sm_90 || a == Arch::sm_90a) && d != DType::fp32;
        ASSERT_EQ(s.variant, hopper ? Variant::wgmma : fs::default_variant(d));
        ASSERT_EQ(s.arch, fs::target_arch(s.variant, a));
        const KernelSpec p = fs::portable_default_spec(d, a, rows);
        ASSERT_NO_THROW(p.validate()) << p.to_string();
        ASSERT_EQ(p.variant, fs::default_variant(d));
        ASSERT_EQ(p.arch, a);
        // Until session 40 the sm_86/sm_89 defaults needed up to 143488 bytes (99 KiB there): every
        // batch but 17-32 threw Unsupported on an L4, L40S or RTX 4090 with no tuning entry.
        ASSERT_LE(s.shared_bytes(), fs::shared_memory_limit(a)) << s.to_string();
        ASSERT_LE(p.shared_bytes(), fs::shared_memory_limit(a)) << p.to_string();
      }
  // Larger batches never get a smaller batch tile.
  for (DType d : kDTypes) {
    int prev = 0;
    for (std::int64_t rows = 1; rows <= 1 << 20; rows *= 2) {
      const int tn = fs::default_spec(d, Arch::sm_90, rows).tile_n;
      EXPECT_GE(tn, prev) << rows;
      prev = tn;
    }
  }
}

TEST(KernelSpec, ArchForComputeCapability) {
  EXPECT_EQ(fs::arch_for_compute_capability(8, 0), Arch::sm_80);
  EXPECT_EQ(fs::arch_for_compute_capability(8, 6), Arch::sm_86);
  EXPECT_EQ(fs::arch_for_compute_capability(8, 7), Arch::sm_86);
  EXPECT_EQ(fs::arch_for_compute_capability(8, 9), Arch::sm_89);
  EXPECT_EQ(fs::arch_for_compute_capability(9, 0), Arch::sm_90);
  EXPECT_EQ(fs::arch_for_compute_capability(10, 0), Arch::sm_90);
  EXPECT_EQ(fs::arch_for_compute_capability(12, 0), Arch::sm_90);
  expect_error<fs::Unsupported>([] { fs::arch_for_compute_capability(7, 5); }, {"7.5"}, "Turing");
  expect_error<fs::Unsupported>([] { fs::arch_for_compute_capability(6, 0); }, {"6.0"}, "Pascal");
  expect_error<fs::Unsupported>([] { fs::arch_for_compute_capability(429496730, 86); }, {"429496730.86"}, "overflow");
  expect_error<fs::Unsupported>([] { fs::arch_for_compute_capability(8, 10); }, {"8.10"}, "two-digit minor");
  expect_error<fs::Unsupported>([] { fs::arch_for_compute_capability(9, -1); }, {"9.-1"}, "negative minor");
}

}  // namespace
