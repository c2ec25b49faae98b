// logits_spec_sweep_test.cpp: KernelSpec::validate and templates/sample_logits.cuh
// agree on the logits variant. Every spec of a sweep over its edges (T_V 16 to
// 512, T_N 8 to 64, 1 to 16 warps, 2 stages) that validate accepts compiles
// with NVRTC; every spec it refuses names its field. The template's static_asserts (whole noise groups
// per thread, a warp's part inside the staged tile) are the kernel's own
// statement of the same rules: a spec validate accepts and the template
// refuses fails here. Until session 62's review, tv16 tn8, tv16 tn16 and tv32
// tn8 passed validate and compiled, and their zero-filling copies wrote past
// the staged tile. No GPU needed.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "fusedsample/compiler.hpp"
#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"

namespace fs = fusedsample;

namespace {

TEST(LogitsSpecSweep, EveryValidSpecCompilesAndEveryOtherIsRefusedByName) {
  int compiled = 0, refused = 0;
  for (int tv : {16, 32, 48, 64, 512})
    for (int tn : {8, 16, 24, 32, 64})
      for (int wm : {1, 4, 16}) {
        fs::KernelSpec s;
        s.dtype = fs::DType::fp32;
        s.arch = fs::Arch::sm_90;
        s.variant = fs::Variant::logits;
        s.tile_v = tv;
        s.tile_n = tn;
        s.stages = 2;
        s.warps_m = wm;
        s.warps_n = 1;
        bool valid = true;
        try {
          s.validate();
        } catch (const fs::InvalidArgument& e) {
          valid = false;
          ++refused;
          const std::string msg = e.what();
          EXPECT_TRUE(msg.find("tile_v") != std::string::npos || msg.find("tile_n") != std::string::npos)
              << s.to_string() << ": " << msg;
        }
        if (!valid) continue;
        SCOPED_TRACE(s.to_string());
        std::shared_ptr<const fs::CompiledKernel> k;
        EXPECT_NO_THROW(k = fs::compile_kernel(s));
        if (k) EXPECT_TRUE(fs::kernel_resources(*k).has_value()) << "ptxas named no fs_fused_kernel";
        ++compiled;
      }
  // T_V a power of two, T_N 8 / 16 / 32, T_V T_N >= 512: 4 x 3 pairs, less tv16 tn8, tv16 tn16, tv32 tn8;
  // 9 pairs x 3 warp counts.
  EXPECT_EQ(compiled, 27);
  EXPECT_EQ(refused, 5 * 5 * 3 - 27);
}

}  // namespace
