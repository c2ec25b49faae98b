// sampler_workspace_reuse_gpu_test.cpp: one Sampler across calls of
// different sizes on a GPU. A call's candidates must start from zero whatever
// an earlier call of fewer rows left in the staging it used, and a CUDA graph
// captured before the workspace grew must still replay correctly.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_memory.hpp"
#include "tests/support/device_buffers.hpp"
#include "tests/support/gpu_test_support.hpp"
#include "tests/support/sampler_api_problem.hpp"
#include "tests/support/sampler_configs.hpp"

namespace fusedsample {
namespace {

using namespace testing::sampler_api_tests;

// bf16 storage of n copies of `bits`.
std::vector<std::uint8_t> bf16_filled(std::size_t n, std::uint16_t bits) {
  std::vector<std::uint8_t> s(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    s[2 * i] = std::uint8_t(bits & 0xff);
    s[2 * i + 1] = std::uint8_t(bits >> 8);
  }
  return s;
}

CUcontext current_context() {
  CUcontext c = nullptr;
  FS_CU(cuCtxGetCurrent(&c));
  return c;
}

// reserve(), a sample() into `out` and one that throws on `sampler` leave
// `caller` current.
void expect_calls_keep(Sampler& sampler, const Problem& pb, const DeviceMemory& out, CUcontext caller) {
  sampler.reserve(4);
  EXPECT_EQ(current_context(), caller) << "reserve() left the Sampler's context current";
  sampler.sample(pb.args(out, 1), nullptr);
  EXPECT_EQ(current_context(), caller) << "sample() left the Sampler's context current";
  SampleArgs bad = pb.args(out, 1);
  bad.temperature = -1.0f;
  EXPECT_THROW(sampler.sample(bad, nullptr), InvalidArgument);
  EXPECT_EQ(current_context(), caller) << "a sample() that threw left the Sampler's context current";
}

// A call of 8 rows that stages its logits in L2 (every logit -8704: W all
// 1, H all -64), then a call of 40 rows on the same Sampler (no growth: the
// first call's workspace holds it). Until the staging got its own buffer,
// the second call's candidates of rows 32-39 lay on the first call's staged
// logits, read as keys of score +8704 and an index past V.
TEST_F(SamplerApiGpu, LargerCallAfterStagedCallStartsFromZeroCandidates) {
  const KernelSpec spec = testing::make_wgmma_coop_spec(DType::bf16, 128, 40, 6, 20, 1, 64, /*stage_in_l2=*/true);
  if (!testing::spec_runs_here(spec)) GTEST_SKIP() << "needs an sm_90 GPU for " << spec.to_string();
  const Problem pb(DType::bf16, rng, 5003, 136, 40);
  const DeviceMemory ones = to_device(bf16_filled(std::size_t(pb.V * pb.d), 0x3f80));      // 1.0
  const DeviceMemory minus64 = to_device(bf16_filled(std::size_t(8 * pb.d), 0xc280));       // -64.0
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype, spec));
  SampleArgs first = pb.args(1);
  first.weights = ones.as<const void>();
  first.hidden_states = minus64.as<const void>();
  first.rows = 8;
  sample_fresh(sampler, first, 8);

  SampleArgs second = pb.args(1);
  second.temperature = 0.0f;  // greedy: one right answer per row
  const auto got = sample_fresh(sampler, second, std::size_t(pb.N));
  Sampler fresh(testing::sampler_options(pb.V, pb.d, pb.dtype, spec));
  const auto want = sample_fresh(fresh, second, std::size_t(pb.N));
  expect_all_in_range(got, pb.V, "the call after a smaller staged call");
  EXPECT_EQ(got, want) << "a call after a smaller one differs from the same call on a fresh Sampler";
}

// reserve(8), a graph of an 8-row call, then a direct call of 256 rows x 16
// samples, which grows the workspace: the graph still replays on memory the
// Sampler owns. Before, the growth freed the buffer the graph's kernel
// parameters point at; the small allocations made after it (poisoned) may
// take its place.
TEST_F(SamplerApiGpu, GraphCapturedBeforeGrowthStillReplays) {
  const Problem pb(DType::bf16, rng, 5003, 136, 256);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  sampler.reserve(8, 1);
  SampleArgs small = pb.args(1);
  small.rows = 8;
  DeviceMemory out_graph(8 * 8);
  small.out = out_graph.as<void>();
  testing::StreamGuard stream;
  testing::GraphGuard graph;
  testing::GraphExecGuard exec;
  capture_sample(sampler, small, stream, graph, exec);
  if (HasFatalFailure()) return;
  const auto direct_small = sample_fresh(sampler, small, 8);

  SampleArgs big = pb.args(16);
  sample_fresh(sampler, big, std::size_t(256 * 16));  // grows the workspace
  std::vector<DeviceMemory> after;                    // what may now lie where the old workspace was
  for (int i = 0; i < 16; ++i) {
    after.emplace_back(8192);
    testing::poison(after.back());
  }
  testing::poison(out_graph);
  FS_CU(cuGraphLaunch(exec.e, stream.s));
  FS_CU(cuStreamSynchronize(stream.s));
  EXPECT_EQ(from_device<std::int64_t>(out_graph, 8), direct_small) << "a graph captured before the growth";
  for (const DeviceMemory& m : after)
    for (std::uint8_t b : from_device<std::uint8_t>(m, m.size()))
      ASSERT_EQ(b, testing::kPoisonByte) << "the graph's replay wrote into memory allocated after the growth";
}

// A caller on device 1's primary context (cudaSetDevice(1)) that makes and
// uses a Sampler of device 0 keeps device 1 current.
TEST(SamplerContextGpu, CallerKeepsItsContext) {
  FS_REQUIRE_GPU();
  int count = 0;
  FS_CU(cuDeviceGetCount(&count));
  if (count < 2) GTEST_SKIP() << "needs two GPUs";
  CUcontext c0 = nullptr, c1 = nullptr;
  FS_CU(cuDevicePrimaryCtxRetain(&c0, 0));
  FS_CU(cuDevicePrimaryCtxRetain(&c1, 1));
  FS_CU(cuCtxSetCurrent(c0));
  std::mt19937_64 rng(1);
  const Problem pb(DType::bf16, rng, 1000, 64, 4);  // device 0's buffers
  DeviceMemory out(4 * 8);
  FS_CU(cuCtxSetCurrent(c1));
  SamplerOptions o = testing::sampler_options(pb.V, pb.d, pb.dtype);
  o.device = 0;
  Sampler sampler(o);
  EXPECT_EQ(current_context(), c1) << "Sampler({.device = 0}) switched the caller off device 1";
  expect_calls_keep(sampler, pb, out, c1);
  FS_CU(cuCtxSetCurrent(c0));
  FS_CU(cuCtxSynchronize());
  expect_all_in_range(from_device<std::int64_t>(out, 4), pb.V, "sample on device 0");
  FS_CU(cuDevicePrimaryCtxRelease(0));
  FS_CU(cuDevicePrimaryCtxRelease(1));
}

// The same on one GPU: a caller's own context of device 0 (cuCtxCreate, which
// the library's driver table leaves out: from libcuda itself) current while a
// Sampler made on the primary context samples, reserves and is destroyed.
// Until session 60 each call left the primary context current; the
// destructor now unloads the modules in the Sampler's own context.
TEST_F(SamplerApiGpu, CallerOwnContextIsKeptAcrossCallsAndDestruction) {
  using CreateFn = CUresult (*)(CUcontext*, unsigned, CUdevice);
  using DestroyFn = CUresult (*)(CUcontext);
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = ::dlopen("libcuda.so.1", RTLD_NOW);
  ASSERT_NE(lib, nullptr) << ::dlerror();
  const auto create = reinterpret_cast<CreateFn>(::dlsym(lib, "cuCtxCreate_v2"));
  const auto destroy = reinterpret_cast<DestroyFn>(::dlsym(lib, "cuCtxDestroy_v2"));
  if (!create || !destroy) GTEST_SKIP() << "this libcuda exports no cuCtxCreate_v2 / cuCtxDestroy_v2";
  const CUcontext primary = current_context();
  ASSERT_NE(primary, nullptr);
  const Problem pb(DType::bf16, rng, 1000, 64, 4);  // the primary context's buffers (unified addresses)
  DeviceMemory out(4 * 8);
  CUcontext own = nullptr;
  {
    Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
    CUdevice dev = 0;
    FS_CU(cuCtxGetDevice(&dev));
    ASSERT_EQ(create(&own, 0, dev), CUDA_SUCCESS);  // current now
    ASSERT_NE(own, primary);
    expect_calls_keep(sampler, pb, out, own);
  }  // destroyed with `own` current
  EXPECT_EQ(current_context(), own) << "~Sampler left another context current";
  ASSERT_EQ(destroy(own), CUDA_SUCCESS);
  FS_CU(cuCtxSetCurrent(primary));
  FS_CU(cuCtxSynchronize());
  expect_all_in_range(from_device<std::int64_t>(out, 4), pb.V, "sample() while another context was current");
}

}  // namespace
}  // namespace fusedsample
