// kernel_spec_shared_memory_test.cpp: the dynamic shared memory a KernelSpec
// reserves covers what its kernel carves out of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>

#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "tests/support/kernel_spec_checks.hpp"

namespace fs = fusedsample;

namespace {

using namespace fusedsample::testing::kernel_spec_tests;

// What the kernels carve out of dynamic shared memory (templates/fused_mma.cuh,
// fused_simt.cuh, sample_logits.cuh): FS_STAGES pipeline stages, each a T_V x
// T_d slice of W and a T_N x T_d slice of H (simt pads rows by 4 fp32), and
// after them the T_N x (T_V + 4) fp32 staged logit tile, live at the same time
// (the persistent pipeline loads the next tile while the epilogue runs).
TEST(KernelSpec, SharedBytesCoverTheKernelsBuffers) {
  for (DType d : kDTypes)
    for (int tv : {64, 128, 256})
      for (int tn : {8, 32, 64})
        for (int td : {16, 32, 64})
          for (int st : {2, 3, 4}) {
            const Variant v = fs::default_variant(d);
            const KernelSpec s = spec(d, v, tv, tn, td, st, 2, 1);
            const std::size_t row = v == Variant::simt ? std::size_t(td + 4) * 4 : std::size_t(td) * fs::dtype_size(d);
            const std::size_t pipeline = std::size_t(st) * std::size_t(tv + tn) * row;
            const std::size_t epilogue = std::size_t(tn) * std::size_t(tv + 4) * 4;
            EXPECT_GE(s.shared_bytes(), pipeline + epilogue) << s.to_string();
          }
  // sample_logits.cuh: a ring of FS_STAGES staged T_N x (T_V + 4) fp32 tiles.
  for (int st : {2, 3, 4}) {
    const KernelSpec l = spec(DType::fp32, Variant::logits, 256, 8, 64, st, 4, 1);
    EXPECT_GE(l.shared_bytes(), std::size_t(st) * 8 * (256 + 4) * 4) << l.to_string();
  }
  // wgmma (templates/fused_wgmma.cuh): 1024 bytes of alignment slack, the
  // stages, and at most 64 batch rows of staged logits at a time.
  for (int tn : {8, 64, 128, 256}) {
    const KernelSpec w = spec(DType::bf16, Variant::wgmma, 64, tn, 64, 3, 4, 1, Arch::sm_90a);
    EXPECT_GE(w.shared_bytes(), 1024 + std::size_t(3) * (64 + tn) * 128 + std::size_t(std::min(tn, 64)) * (64 + 4) * 4);
  }
}

}  // namespace
