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

// The generator's minimum blocks per SM (render.cpp: FS_LOGITS_MIN_BLOCKS):
// only on Hopper, only with one noise group per thread and tile (T_V T_N <=
// 16 threads), and never so many that ptxas spills. Until session 64 every
// logits kernel had none, and the Sampler's default up to 64 rows (tv256 tn8
// s4 w4x1) spilled 64 / 84 bytes in its per-tile loop on sm_90.
TEST(LogitsSpecSweep, MinimumBlocksOnlyWithOneGroupPerThreadAndNeverSpill) {
  auto spec = [](fs::Arch arch, int tv, int tn, int stages, int wm) {
    fs::KernelSpec s;
    s.dtype = fs::DType::fp32;
    s.arch = arch;
    s.variant = fs::Variant::logits;
    s.tile_v = tv;
    s.tile_n = tn;
    s.stages = stages;
    s.warps_m = wm;
    s.warps_n = 1;
    return s;
  };
  auto min_blocks = [](const fs::KernelSpec& s) {
    const std::string src = fs::render_kernel(s).source, key = "#define FS_LOGITS_MIN_BLOCKS ";
    const auto at = src.find(key);
    return at == std::string::npos ? 0 : std::stoi(src.substr(at + key.size()));
  };
  // The Sampler's two defaults (runtime/sampler.cpp, logits_spec) and an sm_80 one.
  EXPECT_EQ(min_blocks(spec(fs::Arch::sm_90, 256, 8, 4, 4)), 6);
  EXPECT_EQ(min_blocks(spec(fs::Arch::sm_90, 512, 8, 2, 4)), 0);
  EXPECT_EQ(min_blocks(spec(fs::Arch::sm_80, 256, 8, 4, 4)), 0);
  EXPECT_EQ(min_blocks(spec(fs::Arch::sm_90, 256, 8, 2, 8)), 3);  // 80 registers per thread of 256
  int with = 0;
  for (int tv : {128, 256, 512})
    for (int tn : {8, 16})
      for (int wm : {4, 8}) {
        const fs::KernelSpec s = spec(fs::Arch::sm_90, tv, tn, 4, wm);
        SCOPED_TRACE(s.to_string());
        const int blocks = min_blocks(s);
        if (tv * tn > 16 * s.threads()) {
          EXPECT_EQ(blocks, 0);
          continue;
        }
        EXPECT_GE(blocks, 2);
        EXPECT_LE(blocks, 6);
        const auto k = fs::compile_kernel(s);
        const auto r = fs::kernel_resources(*k);
        ASSERT_TRUE(r.has_value());
        EXPECT_LE(r->registers * s.threads() * blocks, 65536);
        EXPECT_EQ(r->spill_store_bytes, 0);
        EXPECT_EQ(r->spill_load_bytes, 0);
        EXPECT_EQ(r->stack_bytes, 0);
        ++with;
      }
  EXPECT_EQ(with, 8);  // all but tv256 tn16 w4, tv512 tn8 w4 and tv512 tn16 w4 / w8
}

}  // namespace
