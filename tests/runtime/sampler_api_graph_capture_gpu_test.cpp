// sampler_api_graph_capture_gpu_test.cpp: CUDA graph capture of sample() on
// a GPU: after reserve() the replays match the direct call (logits staged in
// L2 too); growing the workspace, or loading a bucket's kernel, during
// capture is refused with a message that names reserve(), also when the
// capture is another (blocking) stream's.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <utility>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_memory.hpp"
#include "tests/support/device_buffers.hpp"
#include "tests/support/gpu_test_support.hpp"
#include "tests/support/reference_comparison.hpp"
#include "tests/support/sampler_api_problem.hpp"
#include "tests/support/sampler_configs.hpp"

namespace fusedsample {
namespace {

using namespace testing::sampler_api_tests;

// Captures `call` on `stream` in global mode and returns the graph; the
// InvalidArgument it throws, if any, goes to *error (the capture is then
// ended as it is, and must still be valid); any other exception ends the
// capture and propagates.
CUgraph capture_call(CUstream stream, const std::function<void()>& call, std::string* error) {
  FS_CU(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  try {
    call();
  } catch (const InvalidArgument& e) {
    *error = e.what();
  } catch (...) {
    CUgraph g = nullptr;
    driver::api().cuStreamEndCapture(stream, &g);
    if (g) driver::api().cuGraphDestroy(g);
    throw;
  }
  CUgraph g = nullptr;
  const CUresult end = driver::api().cuStreamEndCapture(stream, &g);
  EXPECT_EQ(end, CUDA_SUCCESS) << "cuStreamEndCapture: " << driver::error_text(end);
  if (!error->empty() && g) {  // refused: it must have launched (captured) nothing
    std::size_t nodes = 0;
    FS_CU(cuGraphGetNodes(g, nullptr, &nodes));
    EXPECT_EQ(nodes, 0u) << "a call refused during capture left " << nodes << " node(s) in the graph: " << *error;
  }
  return g;
}

// reserve() then capture sample() into a CUDA graph: replays give the direct
// call's samples, and read the per-row device arrays at replay time.
TEST_F(SamplerApiGpu, GraphCaptureMatchesDirectCall) {
  const Problem pb(DType::bf16, rng);
  const int S = 3;
  const std::size_t n = std::size_t(pb.N * S);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  sampler.reserve(64, 4);  // covers N = 37, S = 3 and every smaller bucket

  std::vector<float> temps;
  std::vector<std::uint64_t> seeds, offsets;
  for (std::int64_t r = 0; r < pb.N; ++r) {
    temps.push_back(r % 5 == 4 ? 0.0f : 0.6f + 0.1f * float(r % 7));
    seeds.push_back(rng());
    offsets.push_back(rng());
  }
  const DeviceMemory dtemps = to_device(temps), dseeds = to_device(seeds);
  DeviceMemory doffsets = to_device(offsets);
  DeviceMemory out_graph(n * 8), out_direct(n * 8);
  SampleArgs a = pb.args(out_graph, S);
  a.temperatures = dtemps.as<const float>();
  a.seeds = dseeds.as<const std::uint64_t>();
  a.offsets = doffsets.as<const std::uint64_t>();

  testing::StreamGuard stream;
  testing::GraphGuard graph;
  testing::GraphExecGuard exec;
  capture_sample(sampler, a, stream, graph, exec);
  if (HasFatalFailure()) return;

  auto replay = [&] {
    testing::poison(out_graph);
    FS_CU(cuGraphLaunch(exec.e, stream.s));
    FS_CU(cuStreamSynchronize(stream.s));
    return from_device<std::int64_t>(out_graph, n);
  };
  auto direct = [&] {
    testing::poison(out_direct);
    SampleArgs b = a;
    b.out = out_direct.as<void>();
    sampler.sample(b, stream.get());
    FS_CU(cuStreamSynchronize(stream.s));
    return from_device<std::int64_t>(out_direct, n);
  };

  const auto graph1 = replay();
  const auto direct1 = direct();
  expect_all_in_range(graph1, pb.V, "graph replay");
  EXPECT_EQ(graph1, direct1) << "graph replay differs from the direct call";
  EXPECT_EQ(replay(), graph1) << "a second replay differs";

  // New offsets in the same device array: the replay picks them up.
  for (auto& o : offsets) o = rng();
  doffsets.upload(offsets.data(), offsets.size() * 8);
  const auto graph2 = replay();
  const auto direct2 = direct();
  EXPECT_EQ(graph2, direct2) << "replay with new offsets differs from the direct call";
  EXPECT_GT(count_differences(graph2, graph1), 0u) << "the replay ignored the new offsets";

  // And the direct calls match the reference.
  std::vector<ReferenceRowParams> rp;
  for (std::int64_t r = 0; r < pb.N; ++r) rp.push_back({temps[std::size_t(r)], seeds[std::size_t(r)], offsets[std::size_t(r)]});
  const auto ref = reference_sample(pb.w.data(), pb.h.data(), pb.dtype, pb.V, pb.d, pb.N, rp, S);
  testing::compare_with_reference(direct2, ref, pb.V, S, "graph test direct call");
}

// A spec that stages its logits in L2 needs a tile of workspace per block
// besides the candidates: reserve() makes room for it, so the capture needs
// no allocation and the replay samples as the direct call does.
TEST_F(SamplerApiGpu, L2StagingCapturesAfterReserve) {
  const KernelSpec spec = testing::make_wgmma_coop_spec(DType::bf16, 128, 40, 6, 20, 1, 64, true);
  if (!testing::spec_runs_here(spec)) GTEST_SKIP() << "needs an sm_90 GPU for " << spec.to_string();
  std::mt19937_64 rng(testing::fresh_seed());
  const Problem pb(DType::bf16, rng);
  const int S = 2;
  const std::size_t n = std::size_t(pb.N * S);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype, spec));
  sampler.reserve(pb.N, S);
  DeviceMemory out_graph(n * 8), out_direct(n * 8);
  testing::StreamGuard stream;
  testing::GraphGuard graph;
  FS_CU(cuStreamBeginCapture(stream.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  std::string error;
  try {
    sampler.sample(pb.args(out_graph, S), stream.get());
  } catch (const std::exception& e) {
    error = e.what();
  }
  driver::api().cuStreamEndCapture(stream.s, &graph.g);
  ASSERT_TRUE(error.empty()) << "capture after reserve() failed: " << error;
  testing::GraphExecGuard exec;
  FS_CU(cuGraphInstantiate(&exec.e, graph.g, 0));
  testing::poison(out_graph);
  FS_CU(cuGraphLaunch(exec.e, stream.s));
  testing::poison(out_direct);
  sampler.sample(pb.args(out_direct, S), stream.get());
  FS_CU(cuStreamSynchronize(stream.s));
  const auto replayed = from_device<std::int64_t>(out_graph, n), direct = from_device<std::int64_t>(out_direct, n);
  expect_all_in_range(direct, pb.V, "direct call");
  EXPECT_EQ(replayed, direct);
}

// Without reserve(), a call that must grow the workspace while the stream is
// being captured throws InvalidArgument naming reserve(), launches nothing
// and leaves the capture valid; after reserve() the same capture works.
TEST_F(SamplerApiGpu, GrowingWorkspaceDuringCaptureThrows) {
  const Problem pb(DType::bf16, rng);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  const int S = 16;
  const std::size_t n = std::size_t(pb.N * S);
  DeviceMemory out(n * 8);

  // Outside capture: load the kernel for this batch size and allocate a
  // workspace for one sample per row (16x too small for S = 16).
  SampleArgs a = pb.args(out, 1);
  a.seed = rng();
  sampler.sample(a, nullptr);
  (void)from_device<std::int64_t>(out, std::size_t(pb.N));

  testing::StreamGuard stream;
  a.num_samples = S;
  auto capture = [&](std::string* error) {
    return capture_call(stream.s, [&] { sampler.sample(a, stream.get()); }, error);
  };

  std::string error;
  {
    testing::GraphGuard graph;
    graph.g = capture(&error);
  }
  EXPECT_FALSE(error.empty()) << "growing the workspace during capture did not throw InvalidArgument";
  EXPECT_NE(error.find("reserve"), std::string::npos) << "the message does not mention reserve(): " << error;

  sampler.reserve(pb.N, S);
  error.clear();
  testing::GraphGuard graph;
  graph.g = capture(&error);
  EXPECT_TRUE(error.empty()) << "capture after reserve() failed: " << error;
  ASSERT_NE(graph.g, nullptr);
  testing::GraphExecGuard exec;
  FS_CU(cuGraphInstantiate(&exec.e, graph.g, 0));
  testing::poison(out);
  FS_CU(cuGraphLaunch(exec.e, stream.s));
  FS_CU(cuStreamSynchronize(stream.s));
  const auto replayed = from_device<std::int64_t>(out, n);
  expect_all_in_range(replayed, pb.V, "replay after reserve");
  const auto direct = sample_fresh(sampler, a, n);
  EXPECT_EQ(replayed, direct);
}

// Buffers a stream-ordered allocator hands out inside the capture
// (cuMemAllocAsync on the capturing stream, as PyTorch's cudaMallocAsync
// backend does for tensors made in torch.cuda.graph) are unknown to the
// driver until the graph first runs. The buffer extent check lets an unknown
// pointer pass while the stream is captured (session 41's first version
// refused them: "not memory the GPU can access"), and the replay samples
// what the direct call does.
TEST_F(SamplerApiGpu, BuffersAllocatedInTheCaptureAreAccepted) {
  const Problem pb(DType::bf16, rng);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  const int S = 2;
  const std::size_t n = std::size_t(pb.N * S), hbytes = pb.h.size();
  sampler.reserve(pb.N, S);
  SampleArgs a = pb.args(S);
  a.seed = rng();
  const auto direct = sample_fresh(sampler, a, n);
  DeviceMemory result(n * 8);
  testing::poison(result);
  testing::StreamGuard stream;
  std::string error;
  testing::GraphGuard graph;
  graph.g = capture_call(
      stream.s,
      [&] {
        CUdeviceptr h = 0, o = 0;
        FS_CU(cuMemAllocAsync(&h, hbytes, stream.s));
        FS_CU(cuMemAllocAsync(&o, n * 8, stream.s));
        FS_CU(cuMemcpyDtoDAsync(h, pb.dh.get(), hbytes, stream.s));
        SampleArgs b = a;
        b.hidden_states = reinterpret_cast<const void*>(h);
        b.out = reinterpret_cast<void*>(o);
        sampler.sample(b, stream.get());
        FS_CU(cuMemcpyDtoDAsync(result.get(), o, n * 8, stream.s));
        FS_CU(cuMemFreeAsync(h, stream.s));
        FS_CU(cuMemFreeAsync(o, stream.s));
      },
      &error);
  EXPECT_TRUE(error.empty()) << "sample() refused buffers allocated in the capture: " << error;
  ASSERT_NE(graph.g, nullptr);
  testing::GraphExecGuard exec;
  FS_CU(cuGraphInstantiate(&exec.e, graph.g, 0));
  FS_CU(cuGraphLaunch(exec.e, stream.s));
  FS_CU(cuStreamSynchronize(stream.s));
  EXPECT_EQ(from_device<std::int64_t>(result, n), direct);
}

// A fresh Sampler (no reserve(), no call yet) captured at once: the bucket's
// kernel is not loaded, and sample() refuses to compile and load it inside
// the capture, with a message naming reserve(); nothing is launched and the
// capture stays valid (until session 40 it compiled and loaded the module
// there). The same capture of sample_logits(). After reserve() both capture.
TEST_F(SamplerApiGpu, ColdBucketDuringCaptureThrows) {
  const Problem pb(DType::bf16, rng);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  const int S = 2;
  const std::size_t n = std::size_t(pb.N * S);
  DeviceMemory out(n * 8), logits(std::size_t(pb.N * pb.V) * sizeof(float));
  FS_CU(cuMemsetD8(logits.get(), 0, logits.size()));
  SampleArgs a = pb.args(out, S);
  a.seed = rng();
  testing::StreamGuard stream;
  const auto fused = [&] { sampler.sample(a, stream.get()); };
  const auto given = [&] { sampler.sample_logits(logits.as<float>(), a, stream.get()); };
  const std::pair<const char*, std::function<void()>> calls[] = {{"sample", fused}, {"sample_logits", given}};
  for (const auto& [name, call] : calls) {
    std::string error;
    testing::GraphGuard graph;
    graph.g = capture_call(stream.s, call, &error);
    EXPECT_NE(error.find("not loaded yet"), std::string::npos) << name << ": " << error;
    EXPECT_NE(error.find("reserve"), std::string::npos) << name << ": " << error;
  }
  sampler.reserve(pb.N, S);
  for (const auto& [name, call] : calls) {
    std::string error;
    testing::GraphGuard graph;
    graph.g = capture_call(stream.s, call, &error);
    EXPECT_TRUE(error.empty()) << name << " after reserve(): " << error;
    ASSERT_NE(graph.g, nullptr) << name;
    testing::GraphExecGuard exec;
    FS_CU(cuGraphInstantiate(&exec.e, graph.g, 0));
    testing::poison(out);
    FS_CU(cuGraphLaunch(exec.e, stream.s));
    FS_CU(cuStreamSynchronize(stream.s));
    expect_all_in_range(from_device<std::int64_t>(out, n), pb.V, name);
  }
}

// reserve(rows) loads every module slot a batch of up to `rows` rows may use:
// the batch buckets up to 128 rows and above them one slot per 8 rows of a
// batch part (a register-epilogue winner's tile fitted to the part, or the
// bucket below's grown to it: session 65), also for the parts of a batch past
// 256 rows. After reserve(300) every batch of 1..300 rows captures without
// compiling or loading anything.
TEST_F(SamplerApiGpu, ReserveCoversEveryFittedSlotDuringCapture) {
  const std::int64_t Nmax = 300;
  const Problem pb(DType::bf16, rng, 5003, 136, Nmax);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  sampler.reserve(Nmax, 1);
  DeviceMemory out(std::size_t(Nmax) * 8);
  testing::StreamGuard stream;
  std::set<std::string> specs;
  for (std::int64_t N = 1; N <= Nmax; ++N) {
    SampleArgs a = pb.args(out, 1);
    a.rows = N;
    a.seed = rng();
    std::string error;
    testing::GraphGuard graph;
    graph.g = capture_call(stream.s, [&] { sampler.sample(a, stream.get()); }, &error);
    const std::string spec = sampler.spec_for(N).to_string();
    EXPECT_TRUE(error.empty()) << "N=" << N << " [" << spec << "] after reserve(" << Nmax << "): " << error;
    specs.insert(spec);
  }
  std::printf("[ summary  ] %zu distinct specs for N = 1..%lld captured after reserve\n", specs.size(),
              static_cast<long long>(Nmax));
}

// Another stream's capture: while a blocking stream of the context is being
// captured in global mode, a cold Sampler called on a non-blocking stream, or
// on the legacy stream, refuses to compile, load and grow (InvalidArgument
// naming the capture and reserve()) and leaves that capture valid and empty.
// Until session 61 only the call's own stream was asked: the call on the
// non-blocking stream went on to load and synchronize the context, which
// invalidated the other capture, and the call on the legacy stream threw a
// CudaError. After reserve() the call on the non-blocking stream runs beside
// the capture and samples what a direct call does.
TEST_F(SamplerApiGpu, ColdCallBesideAnotherStreamsCaptureThrows) {
  const Problem pb(DType::bf16, rng);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  const int S = 2;
  const std::size_t n = std::size_t(pb.N * S);
  DeviceMemory out(n * 8);
  SampleArgs a = pb.args(out, S);
  a.seed = rng();
  testing::StreamGuard captured;  // a blocking stream
  testing::StreamGuard side(CU_STREAM_NON_BLOCKING);
  const std::pair<const char*, Stream> streams[] = {{"a non-blocking stream", side.get()},
                                                    {"the legacy stream", nullptr}};
  for (const auto& [name, stream] : streams) {
    std::string error;
    testing::GraphGuard graph;
    graph.g = capture_call(captured.s, [&, s = stream] { sampler.sample(a, s); }, &error);
    EXPECT_NE(error.find("being captured"), std::string::npos) << name << ": " << error;
    EXPECT_NE(error.find("reserve"), std::string::npos) << name << ": " << error;
  }
  sampler.reserve(pb.N, S);
  {
    std::string error;
    testing::GraphGuard graph;
    testing::poison(out);
    graph.g = capture_call(captured.s, [&] { sampler.sample(a, side.get()); }, &error);
    EXPECT_TRUE(error.empty()) << "a call on a non-blocking stream after reserve(): " << error;
    ASSERT_NE(graph.g, nullptr);
    std::size_t nodes = 1;
    FS_CU(cuGraphGetNodes(graph.g, nullptr, &nodes));
    EXPECT_EQ(nodes, 0u) << "the call on another stream was captured";
  }
  FS_CU(cuStreamSynchronize(side.s));
  const auto beside = from_device<std::int64_t>(out, n);
  expect_all_in_range(beside, pb.V, "call beside a capture");
  EXPECT_EQ(beside, sample_fresh(sampler, a, n));

  // `out` in pageable host memory, on the legacy stream beside the capture: refused as memory the GPU cannot
  // access, as outside any capture (until session 61 the extent check's capture query threw a CudaError there).
  if (testing::gpu_reads_pageable_memory()) {
    std::printf("[ note ] host memory check beside a capture skipped: this GPU reads pageable memory\n");
    return;
  }
  std::vector<std::int64_t> host_out(n);
  SampleArgs b = a;
  b.out = host_out.data();
  std::string error;
  testing::GraphGuard graph;
  graph.g = capture_call(captured.s, [&] { sampler.sample(b, nullptr); }, &error);
  EXPECT_NE(error.find("not memory the GPU can access"), std::string::npos) << error;
}

}  // namespace
}  // namespace fusedsample
