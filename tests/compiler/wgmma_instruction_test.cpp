// wgmma_instruction_test.cpp: the warpgroup MMA instruction the generator
// emits: its N follows the launch bound's registers, and the wrapper takes
// scale-d as an argument. No GPU needed.
#include <gtest/gtest.h>

#include <string>

#include "compiler/wgmma_emitter.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "tests/support/nvrtc_test_specs.hpp"

namespace fs = fusedsample;

namespace {

using namespace fusedsample::testing::nvrtc_tests;

// The instruction shape follows the launch bound's registers: whole T_N
// where its accumulators fit (ws at 168, wgmma at 255, coop w20x1 at 96),
// the largest part of T_N that fits where not (coop w16x1 at 128).
TEST(WgmmaInstruction, LargestPartOfTnThatFitsTheLaunchBound) {
  const auto b = DType::bf16;
  EXPECT_EQ(fs::wgmma_instruction_n(make_spec(b, Variant::wgmma_ws, Arch::sm_90a, 64, 256, 64, 4, 12, 1)), 256);
  EXPECT_EQ(fs::wgmma_instruction_n(make_spec(b, Variant::wgmma, Arch::sm_90a, 128, 256, 64, 3, 8, 1)), 256);
  EXPECT_EQ(fs::wgmma_instruction_n(make_spec(b, Variant::wgmma_coop, Arch::sm_90a, 128, 128, 64, 4, 20, 1)), 128);
  EXPECT_EQ(fs::wgmma_instruction_n(make_spec(b, Variant::wgmma_coop, Arch::sm_90a, 128, 256, 64, 2, 16, 1)), 128);
  EXPECT_EQ(fs::wgmma_instruction_n(make_spec(b, Variant::wgmma_coop, Arch::sm_90a, 128, 192, 64, 2, 16, 1)), 192);
  EXPECT_EQ(fs::wgmma_instruction_n(make_spec(b, Variant::wgmma_coop, Arch::sm_90a, 128, 200, 64, 2, 16, 1)), 40);
  EXPECT_EQ(fs::wgmma_instruction_n(make_spec(b, Variant::wgmma_coop, Arch::sm_90a, 128, 8, 64, 2, 16, 1)), 8);
  // w12x1: 384 threads get 168 registers, enough for one m64n256.
  EXPECT_EQ(fs::wgmma_instruction_n(make_spec(b, Variant::wgmma_coop, Arch::sm_90a, 128, 256, 32, 4, 12, 1)), 256);
}

// The generated wgmma wrapper takes wgmma's scale-d as an argument (default 1:
// accumulate): the register epilogue's tiles start with scale-d = 0 on their
// first k16 step, which overwrites the accumulators instead of zeroing them
// after each tile (the GPU exactness tests of every `re` config check the result).
TEST(WgmmaInstruction, ScaleDIsAnArgument) {
  const std::string w = fs::emit_wgmma_k16(DType::bf16, 128);
  for (const char* needle : {"int scale_d = 1", "\"r\"(scale_d)", "setp.ne.b32 p, %66, 0",
                             "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"})
    EXPECT_NE(w.find(needle), std::string::npos) << needle << " not in:\n" << w;
}

}  // namespace
