// loaded_module_gpu_test.cpp: what a loaded fused kernel reports about its
// residency, which sizes the persistent grid (runtime/sampler.cpp). A cluster
// spec must count whole clusters that the driver can co-schedule.
#include <gtest/gtest.h>

#include <cstdio>

#include "fusedsample/compiler.hpp"
#include "runtime/context.hpp"
#include "runtime/loaded_module.hpp"
#include "tests/support/gpu_test_support.hpp"
#include "tests/support/sampler_configs.hpp"

namespace fusedsample {
namespace {

TEST(LoadedModuleGpu, ResidentBlocksCountWholeClusters) {
  FS_REQUIRE_GPU();
  const runtime::Context ctx(-1);
  if (ctx.cc_major() != 9 || ctx.cc_minor() != 0) GTEST_SKIP() << "wgmma_coop needs a Hopper GPU (compute capability 9.0)";
  for (int cluster : {1, 2, 4}) {
    const KernelSpec spec = testing::make_wgmma_coop_spec(DType::bf16, 128, 64, 4, 20, cluster);
    const runtime::LoadedModule m(ctx, compile_kernel(spec));
    std::printf("[ resident ] %s: %d blocks on %d multiprocessors\n", spec.to_string().c_str(), m.resident_blocks(),
                ctx.multiprocessors());
    EXPECT_GT(m.resident_blocks(), 0) << spec.to_string();
    EXPECT_EQ(m.resident_blocks() % cluster, 0) << spec.to_string();
    EXPECT_LE(m.resident_blocks(), ctx.multiprocessors()) << spec.to_string();  // one block per multiprocessor
  }
}

}  // namespace
}  // namespace fusedsample
