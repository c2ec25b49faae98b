// sampler_limits_gpu_test.cpp: launches the sampler refuses by their size, on
// a GPU (the spec is known only once a Sampler has picked its module). A
// stream-K (sk) kernel walks the launch's k-steps as 32-bit positions
// (templates/stream_k.cuh: fs_sk_walk), so a launch of 2^31 k-steps or more
// must throw InvalidArgument naming the count, before anything is launched or
// allocated; W is never read, so a small buffer stands in for it (the launch's
// limits are checked before the buffers' extents, which would refuse it). A
// workspace larger than the GPU's memory throws CudaError saying what it was
// for, and leaves the sampler as it was.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "runtime/device_memory.hpp"
#include "tests/support/device_buffers.hpp"
#include "tests/support/gpu_test_support.hpp"
#include "tests/support/sampler_api_problem.hpp"
#include "tests/support/sampler_configs.hpp"

namespace fusedsample {
namespace {

using runtime::DeviceMemory;

TEST(SamplerLimitsGpu, StreamKLaunchOf2To31KStepsThrows) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  for (const bool reg_epilogue : {false, true}) {
    // V = 2^31 - 1025 (the largest vocabulary) in 16777208 tiles of 128; d = 8200 is 129 k-steps of 64:
    // 2164259832 k-steps > 2^31 - 1.
    const KernelSpec spec = reg_epilogue
                                ? testing::make_wgmma_coop_spec(DType::bf16, 128, 128, 4, 12, 1, 64, false, true, true)
                                : testing::make_wgmma_coop_spec(DType::bf16, 128, 8, 4, 16, 1, 64, false, true);
    SCOPED_TRACE(spec.to_string());
    if (!testing::spec_runs_here(spec)) GTEST_SKIP() << "needs an sm_90 GPU for " << spec.to_string();
    const std::int64_t V = 2147482623, d = 8200, N = 1;
    Sampler sampler(testing::sampler_options(V, d, DType::bf16, spec));
    DeviceMemory w(4096), h(std::size_t(N * d * 2)), out(8);
    testing::poison(out);
    SampleArgs a;
    a.weights = w.as<const void>();
    a.hidden_states = h.as<const void>();
    a.rows = N;
    a.out = out.as<void>();
    try {
      sampler.sample(a, nullptr);
      ADD_FAILURE() << "a stream-K launch of 2164259832 k-steps was not refused";
    } catch (const InvalidArgument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("16777208 tiles of 129 k-steps"), std::string::npos) << what;
      EXPECT_NE(what.find("stream-K"), std::string::npos) << what;
    }
    const auto untouched = testing::from_device<std::int64_t>(out, 1);
    EXPECT_EQ(untouched[0], testing::kPoison64) << "a refused call wrote the output";
  }
}

// reserve() for more (row, sample) pairs than the GPU has memory for (2^31 - 1
// rows of 400 samples: about 10 TB of workspace) throws CudaError naming the
// workspace and its size; the sampler keeps its old workspace, so the next
// call samples as before (a server that asked for too large a batch goes on).
TEST(SamplerLimitsGpu, WorkspaceLargerThanTheGpuThrowsAndKeepsTheSampler) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
  const testing::sampler_api_tests::Problem pb(DType::bf16, rng);
  const KernelSpec spec = testing::make_spec(DType::bf16, 64, 8, 32, 3, 4, 1);  // one module for every bucket
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype, spec));
  const int S = 2;
  auto run = [&] {
    return testing::sampler_api_tests::run64(std::size_t(pb.N * S), [&](const DeviceMemory& out) {
      SampleArgs a = pb.args(out, S);
      a.seed = 77;
      sampler.sample(a, nullptr);
    });
  };
  const auto before = run();
  testing::sampler_api_tests::expect_all_in_range(before, pb.V, "before");
  try {
    sampler.reserve(kMaxRows, 400);
    ADD_FAILURE() << "a workspace of about 10 TB was allocated";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("the sampler's workspace of"), std::string::npos) << what;
    EXPECT_EQ(e.name(), "CUDA_ERROR_OUT_OF_MEMORY") << what;
  }
  EXPECT_EQ(run(), before) << "the sampler samples differently after a workspace it could not allocate";
}

}  // namespace
}  // namespace fusedsample
