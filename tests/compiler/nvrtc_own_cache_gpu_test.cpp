// nvrtc_own_cache_gpu_test.cpp: every NVRTC compile returns ptxas's -v
// report, also the second compile of one program in a process. NVRTC 12.9+
// keeps its own cache (in the driver's compute cache, so it is only active
// where a CUDA driver is installed: on a GPU machine) and a program served
// from it has an empty log; on the H200 the second compile below got no log
// before nvrtc_options added `--no-cache` (session 37).
#include <gtest/gtest.h>

#include "fusedsample/compiler.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "tests/support/gpu_test_support.hpp"

namespace fusedsample {
namespace {

TEST(NvrtcOwnCache, EveryCompileCarriesThePtxasReport) {
  FS_REQUIRE_GPU();  // (NVRTC's cache needs the driver)
  const RenderedKernel r = render_kernel(default_spec(DType::bf16, Arch::sm_90, 8));
  for (int i = 0; i < 2; ++i) {
    const CompiledKernel k = compile_uncached(r);
    EXPECT_TRUE(has_ptxas_report(k.log)) << "compile " << i + 1 << " has no ptxas report; log:\n" << k.log;
    EXPECT_TRUE(kernel_resources(k, "fs_fused_kernel").has_value()) << "compile " << i + 1;
  }
}

}  // namespace
}  // namespace fusedsample
