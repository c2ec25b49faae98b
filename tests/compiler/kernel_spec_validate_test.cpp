// kernel_spec_validate_test.cpp: KernelSpec::validate() accepts the valid
// specs of every variant and refuses the others with a message that names
// the bad field.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "tests/support/kernel_spec_checks.hpp"

namespace fs = fusedsample;

namespace {

using namespace fusedsample::testing::kernel_spec_tests;

KernelSpec with_cluster(KernelSpec s, int cluster) {
  s.cluster = cluster;
  return s;
}

KernelSpec in_l2(KernelSpec s) {
  s.stage_in_l2 = true;
  return s;
}

TEST(KernelSpec, ValidSpecsPass) {
  const KernelSpec ok[] = {
      spec(DType::bf16, Variant::mma_sync, 128, 16, 64, 4, 4, 1),
      spec(DType::fp16, Variant::mma_sync, 64, 8, 32, 3, 4, 1),
      spec(DType::bf16, Variant::mma_sync, 256, 32, 64, 3, 4, 2),
      spec(DType::bf16, Variant::mma_sync, 128, 64, 64, 6, 4, 2),  // 181248 bytes: Hopper's 227 KiB (sm_80/86: no)
      spec(DType::fp16, Variant::mma_sync, 16, 8, 16, 2, 1, 1),
      spec(DType::fp32, Variant::simt, 128, 32, 32, 3, 4, 1),
      spec(DType::fp32, Variant::simt, 32, 8, 16, 2, 1, 1),
      spec(DType::fp32, Variant::logits, 256, 8, 64, 4, 4, 1),
      spec(DType::bf16, Variant::logits, 256, 8, 0, 2, 4, 1),  // logits ignores tile_d (not the stages: its ring)
      spec(DType::fp32, Variant::logits, 16, 32, 64, 2, 4, 1),  // the smallest tiles: 32 threads per tile
      spec(DType::fp32, Variant::logits, 32, 16, 64, 2, 4, 1),
      spec(DType::fp32, Variant::logits, 64, 8, 64, 2, 1, 1),
      spec(DType::bf16, Variant::wgmma, 64, 8, 64, 4, 4, 1, Arch::sm_90a),
      spec(DType::fp16, Variant::wgmma, 128, 256, 64, 3, 8, 1, Arch::sm_90a),
      spec(DType::bf16, Variant::wgmma, 128, 128, 64, 3, 4, 1, Arch::sm_90a),  // two 64-row blocks per warpgroup
      spec(DType::bf16, Variant::wgmma, 128, 32, 128, 4, 8, 1, Arch::sm_90a),  // two 64-column sub-tiles per stage
      spec(DType::bf16, Variant::wgmma, 128, 192, 64, 3, 8, 1, Arch::sm_90a),  // three epilogue passes of 64 rows
      spec(DType::bf16, Variant::wgmma_ws, 128, 128, 64, 4, 12, 1, Arch::sm_90a),
      spec(DType::fp16, Variant::wgmma_ws, 64, 256, 64, 4, 12, 1, Arch::sm_90a),
      spec(DType::bf16, Variant::wgmma_ws, 64, 8, 64, 8, 12, 1, Arch::sm_90a),
      spec(DType::bf16, Variant::wgmma_coop, 128, 128, 64, 4, 16, 1, Arch::sm_90a),
      spec(DType::fp16, Variant::wgmma_coop, 256, 64, 64, 3, 20, 1, Arch::sm_90a),  // two 64-row blocks per consumer
      spec(DType::bf16, Variant::wgmma_coop, 128, 8, 64, 2, 16, 1, Arch::sm_90a),
      spec(DType::bf16, Variant::wgmma_coop, 128, 128, 64, 5, 20, 1, Arch::sm_90a),  // five stages: the staged tile is unpadded
      with_cluster(spec(DType::bf16, Variant::wgmma_coop, 128, 128, 64, 5, 20, 1, Arch::sm_90a), 2),
      with_cluster(spec(DType::fp16, Variant::wgmma_coop, 256, 32, 64, 4, 16, 1, Arch::sm_90a), 4),
      spec(DType::bf16, Variant::wgmma_coop, 128, 64, 128, 4, 20, 1, Arch::sm_90a),  // two boxes per stage
      spec(DType::bf16, Variant::wgmma_coop, 128, 256, 64, 2, 16, 1, Arch::sm_90a),  // 128 accumulators: 2 x m64n128
      spec(DType::fp16, Variant::wgmma_coop, 256, 128, 64, 2, 16, 1, Arch::sm_90a),  // 128 accumulators: 2 row blocks
      spec(DType::bf16, Variant::wgmma_coop, 128, 256, 32, 4, 12, 1, Arch::sm_90a),  // w12x1: one m64n256, 64-byte rows
      spec(DType::bf16, Variant::wgmma_coop, 128, 128, 32, 6, 12, 1, Arch::sm_90a),  // w12x1 with 64 accumulators
      in_l2(spec(DType::bf16, Variant::wgmma_coop, 256, 128, 64, 4, 12, 1, Arch::sm_90a)),  // logits staged in L2
      in_l2(spec(DType::fp16, Variant::wgmma_coop, 128, 128, 64, 6, 20, 1, Arch::sm_90a)),
  };
  for (const KernelSpec& s : ok) {
    EXPECT_NO_THROW(s.validate()) << s.to_string();
    EXPECT_EQ(s.threads(), 32 * s.warps_m * s.warps_n);
  }
}

struct BadSpec {
  KernelSpec spec;
  bool unsupported;                 // Unsupported rather than InvalidArgument
  std::vector<std::string> needles;  // the message names the field
};

TEST(KernelSpec, ValidateNamesTheBadField) {
  const DType b = DType::bf16, f = DType::fp32;
  const Variant m = Variant::mma_sync, s = Variant::simt, w = Variant::wgmma;
  const std::vector<BadSpec> cases = {
      {spec(b, m, 24, 16, 64, 4, 4, 1), false, {"tile_v"}},
      {spec(b, m, 0, 16, 64, 4, 4, 1), false, {"tile_v"}},
      {spec(b, m, 528, 16, 64, 4, 4, 1), false, {"tile_v"}},
      {spec(b, m, -16, 16, 64, 4, 4, 1), false, {"tile_v"}},
      {spec(b, m, 128, 12, 64, 4, 4, 1), false, {"tile_n"}},
      {spec(b, m, 128, 0, 64, 4, 4, 1), false, {"tile_n"}},
      {spec(b, m, 128, 264, 64, 4, 4, 1), false, {"tile_n"}},
      {spec(b, m, 128, 16, 64, 4, 0, 1), false, {"warps_m"}},
      {spec(b, m, 128, 16, 64, 4, 4, 0), false, {"warps_n"}},
      {spec(b, m, 128, 16, 64, 4, 8, 4), false, {"warps_m * warps_n"}},
      // Factors whose product overflows an int: 65536 x 65536 wrapped to 0, passed, and the simt check then
      // divided by it (SIGFPE); 2^31 - 1 x 2 wrapped negative.
      {spec(f, s, 128, 64, 32, 3, 65536, 65536), false, {"warps_m * warps_n"}},
      {spec(b, m, 128, 16, 64, 4, 2147483647, 2), false, {"warps_m * warps_n"}},
      {spec(b, Variant::logits, 128, 16, 64, 4, 65536, 65536), false, {"warps_m * warps_n"}},
      // Since session 62 the logits kernel has a ring of stages (one stage failed its static_assert in NVRTC,
      // and stages past the shared memory a launch), and each warp copies and samples every batch row of a
      // tile, 32 / T_N lanes per row.
      {spec(b, Variant::logits, 256, 8, 64, 1, 4, 1), false, {"stages"}},
      {spec(b, Variant::logits, 512, 32, 64, 8, 4, 1), false, {"shared memory"}},
      {spec(b, Variant::logits, 256, 64, 64, 2, 4, 1), false, {"tile_n", "8, 16 or 32"}},
      {spec(b, Variant::logits, 256, 24, 64, 2, 4, 1), false, {"tile_n", "8, 16 or 32"}},
      {spec(b, Variant::logits, 48, 8, 64, 2, 4, 1), false, {"tile_v", "power of two"}},
      // Fewer than 32 threads per tile: warp 0's copies would run past the staged rows (review of session 62).
      {spec(b, Variant::logits, 16, 8, 64, 2, 4, 1), false, {"tile_v * tile_n", "512"}},
      {spec(b, Variant::logits, 16, 16, 64, 2, 4, 1), false, {"tile_v * tile_n", "512"}},
      {spec(b, Variant::logits, 32, 8, 64, 2, 1, 1), false, {"tile_v * tile_n", "512"}},
      {spec(b, m, 128, 16, 64, 1, 4, 1), false, {"stages"}},
      {spec(b, m, 128, 16, 64, 0, 4, 1), false, {"stages"}},
      {spec(b, m, 128, 16, 64, 64, 4, 1), false, {"stages"}},
      {spec(b, m, 128, 16, 48, 4, 4, 1), false, {"tile_d"}},
      {spec(b, m, 128, 16, 8, 4, 4, 1), false, {"tile_d"}},
      {spec(b, m, 128, 16, 256, 4, 4, 1), false, {"tile_d"}},
      {spec(f, m, 128, 16, 64, 4, 4, 1), true, {"mma_sync", "fp32"}},
      {spec(b, s, 128, 16, 32, 3, 4, 1), true, {"simt", "fp32"}},
      {spec(DType::fp16, s, 128, 16, 32, 3, 4, 1), true, {"simt"}},
      {spec(b, m, 64, 16, 64, 4, 8, 1), false, {"tile_v / warps_m"}},   // 8 rows per warp
      {spec(b, m, 48, 16, 64, 4, 2, 1), false, {"tile_v / warps_m"}},   // 24 rows per warp
      {spec(b, m, 128, 8, 64, 4, 4, 2), false, {"tile_n / warps_n"}},   // 4 columns per warp
      {spec(b, m, 128, 24, 64, 4, 4, 2), false, {"tile_n / warps_n"}},  // 12 columns per warp
      {spec(b, m, 512, 64, 32, 2, 1, 1), false, {"warp tile"}},         // 32 x 8 mma tiles
      // One warp cannot cover a 128-deep bf16 row (16 chunks) in the swizzled
      // loader (templates/pipeline.cuh: threads / chunks must be a multiple of 8).
      {spec(b, m, 16, 8, 128, 2, 1, 1), false, {"threads"}},
      {spec(f, s, 48, 16, 32, 3, 1, 1), false, {"tile_v"}},
      {spec(f, s, 128, 8, 32, 3, 4, 4), false, {"tile_n", "warp count"}},
      {spec(f, s, 512, 128, 32, 2, 1, 1), false, {"accumulators"}},
      {spec(b, m, 256, 64, 128, 8, 4, 2), false, {"shared memory"}},
      {spec(f, s, 256, 64, 128, 8, 4, 4), false, {"shared memory"}},
      // The arch's own limit: 181248 bytes are 227 KiB's on Hopper, but more than an sm_86 (99 KiB) or an sm_80
      // (163 KiB) block gets (until session 48 only 227 KiB was checked, and such a spec compiled).
      {spec(b, m, 128, 64, 64, 6, 4, 2, Arch::sm_86), false, {"shared memory", "99 KiB on sm_86"}},
      {spec(b, m, 128, 64, 64, 6, 4, 2, Arch::sm_80), false, {"shared memory", "163 KiB on sm_80"}},
      // wgmma: Hopper's arch-specific target only, 64-deep stages, whole warpgroups.
      {spec(b, w, 128, 64, 64, 3, 4, 1, Arch::sm_90), true, {"wgmma", "sm_90a"}},
      {spec(b, w, 128, 64, 64, 3, 4, 1, Arch::sm_80), true, {"wgmma", "sm_90a"}},
      {spec(f, w, 128, 64, 64, 3, 4, 1, Arch::sm_90a), true, {"wgmma", "fp32"}},
      {spec(b, w, 128, 64, 32, 3, 4, 1, Arch::sm_90a), false, {"tile_d", "64", "or 128"}},
      {spec(b, w, 128, 64, 64, 3, 2, 2, Arch::sm_90a), false, {"warpgroups"}},
      {spec(b, w, 96, 64, 64, 3, 4, 1, Arch::sm_90a), false, {"64 per warpgroup"}},
      {spec(b, w, 128, 256, 64, 3, 4, 1, Arch::sm_90a), false, {"128 accumulators"}},
      // Past 64 batch rows the epilogue stages 64 per pass: tn160 and tn224 (the search space's fitted
      // tiles) validated and then failed fused_wgmma.cuh's static_assert in NVRTC (session 37).
      {spec(b, w, 128, 160, 64, 4, 8, 1, Arch::sm_90a), false, {"tile_n", "multiple of 64", "160"}},
      {spec(b, w, 128, 224, 128, 2, 8, 1, Arch::sm_90a), false, {"tile_n", "multiple of 64", "224"}},
      {spec(b, w, 128, 96, 64, 3, 8, 1, Arch::sm_90a), false, {"tile_n", "multiple of 64", "96"}},
      {spec(b, Variant::wgmma_ws, 128, 64, 64, 4, 12, 1, Arch::sm_90), true, {"wgmma_ws", "sm_90a"}},
      {spec(b, Variant::wgmma_ws, 128, 64, 64, 4, 8, 1, Arch::sm_90a), false, {"w12x1"}},
      {spec(b, Variant::wgmma_ws, 256, 64, 64, 4, 12, 1, Arch::sm_90a), false, {"64 or 128"}},
      {spec(b, Variant::wgmma_ws, 128, 256, 64, 2, 12, 1, Arch::sm_90a), false, {"128 accumulators"}},
      {spec(b, Variant::wgmma_ws, 128, 64, 64, 2, 12, 1, Arch::sm_90a), false, {"stages"}},
      {spec(b, Variant::wgmma_ws, 128, 64, 128, 4, 12, 1, Arch::sm_90a), false, {"tile_d must be 64"}},
      {spec(b, Variant::wgmma_coop, 128, 64, 16, 4, 16, 1, Arch::sm_90a), false, {"tile_d", "or 32"}},
      {spec(b, Variant::wgmma_coop, 128, 128, 128, 3, 20, 1, Arch::sm_90a), false, {"shared memory"}},
      {spec(b, Variant::wgmma_coop, 128, 128, 64, 4, 16, 1, Arch::sm_90), true, {"wgmma_coop", "sm_90a"}},
      {spec(f, Variant::wgmma_coop, 128, 128, 64, 4, 16, 1, Arch::sm_90a), true, {"wgmma_coop", "fp32"}},
      {spec(b, Variant::wgmma_coop, 128, 64, 64, 4, 8, 1, Arch::sm_90a), false, {"w12x1", "w16x1 or w20x1"}},
      {spec(b, Variant::wgmma_coop, 128, 64, 64, 4, 4, 2, Arch::sm_90a), false, {"w12x1"}},
      {spec(b, Variant::wgmma_coop, 128, 64, 64, 4, 24, 1, Arch::sm_90a), false, {"[1, 20]"}},
      {spec(b, Variant::wgmma_coop, 64, 64, 64, 4, 16, 1, Arch::sm_90a), false, {"128 or 256"}},
      {spec(b, Variant::wgmma_coop, 128, 256, 64, 2, 20, 1, Arch::sm_90a), false, {"need w16x1 or w12x1"}},
      // T_d = 32 with 128 KiB of staged logits: five stages of 24 KiB do not fit, four do (valid list).
      {spec(b, Variant::wgmma_coop, 128, 256, 32, 5, 12, 1, Arch::sm_90a), false, {"shared memory"}},
      {spec(b, Variant::wgmma_coop, 256, 256, 64, 2, 16, 1, Arch::sm_90a), false, {"128 accumulators"}},
      {spec(b, Variant::wgmma_coop, 128, 256, 64, 3, 16, 1, Arch::sm_90a), false, {"shared memory"}},
      {spec(b, Variant::wgmma_coop, 256, 128, 64, 2, 20, 1, Arch::sm_90a), false, {"64 accumulators"}},
      {spec(b, Variant::wgmma_coop, 128, 128, 64, 6, 16, 1, Arch::sm_90a), false, {"shared memory"}},
      {spec(b, Variant::wgmma_coop, 256, 64, 64, 5, 16, 1, Arch::sm_90a), false, {"shared memory"}},
      {spec(b, Variant::mma_sync, 128, 64, 64, 4, 20, 1), false, {"[1, 16]"}},
      {with_cluster(spec(b, Variant::wgmma_coop, 128, 64, 64, 4, 16, 1, Arch::sm_90a), 3), false, {"cluster", "1, 2 or 4"}},
      {with_cluster(spec(b, Variant::wgmma_coop, 128, 64, 64, 4, 16, 1, Arch::sm_90a), 8), false, {"cluster"}},
      {with_cluster(spec(b, Variant::wgmma_coop, 128, 64, 64, 4, 16, 1, Arch::sm_90a), 0), false, {"cluster"}},
      {with_cluster(spec(b, Variant::wgmma_ws, 128, 64, 64, 4, 12, 1, Arch::sm_90a), 2), false, {"wgmma_coop only"}},
      {with_cluster(spec(b, Variant::mma_sync, 128, 16, 64, 4, 4, 1), 2), false, {"wgmma_coop only"}},
      {in_l2(spec(b, Variant::wgmma_ws, 128, 64, 64, 4, 12, 1, Arch::sm_90a)), false, {"l2", "wgmma_coop only"}},
      {in_l2(spec(b, Variant::mma_sync, 128, 16, 64, 4, 4, 1)), false, {"l2", "wgmma_coop only"}},
      {in_l2(spec(b, Variant::wgmma_coop, 128, 256, 64, 5, 12, 1, Arch::sm_90a)), false, {"shared memory"}},
      {spec(b, Variant::wgmma, 256, 256, 64, 2, 16, 1, Arch::sm_90a), false, {"128 accumulators", "registers"}},
  };
  for (const BadSpec& c : cases) {
    const std::string text = c.spec.to_string();
    if (c.unsupported) expect_error<fs::Unsupported>([&] { c.spec.validate(); }, c.needles, text);
    else expect_error<fs::InvalidArgument>([&] { c.spec.validate(); }, c.needles, text);
  }
  // InvalidArgument messages quote the whole spec.
  expect_error<fs::InvalidArgument>([] { spec(DType::bf16, Variant::mma_sync, 24, 16, 64, 4, 4, 1).validate(); },
                                    {"bf16 sm_90 mma_sync tv24 tn16 td64 s4 w4x1"}, "spec in message");
}

}  // namespace
