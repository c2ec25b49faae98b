// sampler_buffer_extents_gpu_test.cpp: a buffer too small for the call's
// shape is refused before anything is launched (runtime/buffer_extents.hpp):
// W, H, the output, a per-row array and sample_logits' logits, each placed so
// that its extent runs 16 bytes past the end of its allocation (allocations
// of whole 2 MiB, so no rounding by the driver can hide it), throw
// InvalidArgument naming the buffer and its shape, and leave the output
// unwritten. The same buffers placed to end exactly at the allocation's end
// sample as usual, with the default (TMA-fed) kernel and with one that loads
// W and H itself. A host pointer is refused unless the GPU reads pageable
// memory, in which case it samples.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
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

constexpr std::size_t kArena = std::size_t(2) << 20;

// A pointer `bytes + past` before the end of `arena`: the extent runs `past` bytes beyond it.
void* ending_at(const DeviceMemory& arena, std::size_t bytes, std::size_t past = 0) {
  return reinterpret_cast<void*>(arena.get() + arena.size() - bytes + past);
}

void expect_refused(const std::function<void()>& call, const std::vector<std::string>& needles, const char* what) {
  try {
    call();
    ADD_FAILURE() << what << ": not refused";
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << what << ": '" << n << "' not in: " << msg;
  }
}

TEST_F(SamplerApiGpu, BuffersTooSmallForTheShapeAreRefused) {
  const Problem pb(DType::bf16, rng);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  const int S = 2;
  const std::size_t n = std::size_t(pb.N * S), wbytes = pb.w.size(), hbytes = pb.h.size();
  ASSERT_EQ(wbytes % 16, 0u);
  ASSERT_EQ(hbytes % 16, 0u);
  ASSERT_LE(wbytes, 2 * kArena);
  const std::uint64_t seed = rng();
  auto args_with = [&](const void* w, const void* h, const DeviceMemory& out) {
    SampleArgs a = pb.args(out, S);
    a.weights = w;
    a.hidden_states = h;
    a.seed = seed;
    return a;
  };
  const auto want = run64(n, [&](const DeviceMemory& out) { sampler.sample(args_with(pb.dw.as<void>(), pb.dh.as<void>(), out), nullptr); });
  expect_all_in_range(want, pb.V, "reference call");

  DeviceMemory warena(2 * kArena), harena(kArena), oarena(kArena), sarena(kArena), larena(kArena);
  // W and H ending exactly at their allocations' ends: the same samples.
  FS_CU(cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(ending_at(warena, wbytes)), pb.w.data(), wbytes));
  FS_CU(cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(ending_at(harena, hbytes)), pb.h.data(), hbytes));
  EXPECT_EQ(run64(n, [&](const DeviceMemory& out) {
              sampler.sample(args_with(ending_at(warena, wbytes), ending_at(harena, hbytes), out), nullptr);
            }),
            want)
      << "W and H at the ends of their allocations";

  // The same with a kernel that loads W and H itself (mma_sync, cp.async; the default spec above copies them
  // with the tensor copy engine): no load reaches past the buffers' ends.
  {
    Sampler own_loads(testing::sampler_options(pb.V, pb.d, pb.dtype, testing::make_spec(DType::bf16, 64, 8, 32, 3, 4, 1)));
    const auto mine = run64(n, [&](const DeviceMemory& o) { own_loads.sample(args_with(pb.dw.as<void>(), pb.dh.as<void>(), o), nullptr); });
    EXPECT_EQ(run64(n, [&](const DeviceMemory& o) {
                own_loads.sample(args_with(ending_at(warena, wbytes), ending_at(harena, hbytes), o), nullptr);
              }),
              mine)
        << "mma_sync with W and H at the ends of their allocations";
  }

  DeviceMemory out(n * 8);
  testing::poison(out);
  const std::string wshape = "[" + std::to_string(pb.V) + ", " + std::to_string(pb.d) + "] bf16";
  expect_refused([&] { sampler.sample(args_with(ending_at(warena, wbytes, 16), pb.dh.as<void>(), out), nullptr); },
                 {"weights", wshape, std::to_string(wbytes) + " bytes", "is the shape right?"}, "W 16 bytes short");
  expect_refused([&] { sampler.sample(args_with(pb.dw.as<void>(), ending_at(harena, hbytes, 16), out), nullptr); },
                 {"hidden_states", "[" + std::to_string(pb.N) + ", " + std::to_string(pb.d) + "] bf16"}, "H 16 bytes short");
  expect_refused(
      [&] {
        SampleArgs a = args_with(pb.dw.as<void>(), pb.dh.as<void>(), out);
        a.out = ending_at(oarena, n * 8, 8);
        sampler.sample(a, nullptr);
      },
      {"out", "[" + std::to_string(pb.N) + ", 2] int64"}, "out one index short");
  expect_refused(
      [&] {
        SampleArgs a = args_with(pb.dw.as<void>(), pb.dh.as<void>(), out);
        a.seeds = static_cast<const std::uint64_t*>(ending_at(sarena, std::size_t(pb.N) * 8, 8));
        sampler.sample(a, nullptr);
      },
      {"seeds", "[" + std::to_string(pb.N) + "] uint64"}, "seeds one row short");
  expect_refused(
      [&] {
        SampleArgs a = args_with(nullptr, nullptr, out);
        sampler.sample_logits(static_cast<const float*>(ending_at(larena, std::size_t(pb.N * pb.V) * 4, 16)), a, nullptr);
      },
      {"logits", "[" + std::to_string(pb.N) + ", " + std::to_string(pb.V) + "] fp32"}, "logits 4 values short");
  const auto untouched = from_device<std::int64_t>(out, n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(untouched[i], testing::kPoison64) << "a refused call wrote out[" << i << "]";

  // W in pageable host memory.
  const std::vector<std::uint8_t> host_w = pb.w;
  if (testing::gpu_reads_pageable_memory()) {
    EXPECT_EQ(run64(n, [&](const DeviceMemory& o) { sampler.sample(args_with(host_w.data(), pb.dh.as<void>(), o), nullptr); }),
              want)
        << "W in pageable host memory on a GPU that reads it";
  } else {
    expect_refused([&] { sampler.sample(args_with(host_w.data(), pb.dh.as<void>(), out), nullptr); },
                   {"weights", "not memory the GPU can access"}, "W in host memory");
  }
  // The context is as before.
  EXPECT_EQ(run64(n, [&](const DeviceMemory& o) { sampler.sample(args_with(pb.dw.as<void>(), pb.dh.as<void>(), o), nullptr); }),
            want);
}

// Two virtual-memory reservations back to back (the second reserved at the
// first one's end), each mapped to its own physical chunk: a valid buffer
// may span them, and the driver reports each reservation's range alone, so
// the check joins adjacent reservations before it refuses (H across the two
// samples as usual), while cudaMalloc allocations are never joined (the test
// above: W running 16 bytes into the next allocation is refused).
TEST_F(SamplerApiGpu, BufferAcrossAdjacentReservationsIsAccepted) {
  const Problem pb(DType::bf16, rng);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  const int S = 1;
  const std::size_t n = std::size_t(pb.N * S), hbytes = pb.h.size();
  SampleArgs a = pb.args(S);
  a.seed = rng();
  const auto want = sample_fresh(sampler, a, n);

  CUdevice dev;
  FS_CU(cuCtxGetDevice(&dev));
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = int(dev);
  std::size_t gran = 0;
  FS_CU(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  ASSERT_GE(gran, hbytes);
  // A free stretch of two granules (reserved, then given back), reserved again as two ranges at its addresses.
  CUdeviceptr stretch = 0, first = 0, second = 0;
  FS_CU(cuMemAddressReserve(&stretch, 2 * gran, gran, 0, 0));
  FS_CU(cuMemAddressFree(stretch, 2 * gran));
  FS_CU(cuMemAddressReserve(&first, gran, gran, stretch, 0));
  const CUresult hinted = driver::api().cuMemAddressReserve(&second, gran, gran, first + gran, 0);
  if (hinted != CUDA_SUCCESS || second != first + gran) {
    if (hinted == CUDA_SUCCESS) FS_CU(cuMemAddressFree(second, gran));
    FS_CU(cuMemAddressFree(first, gran));
    GTEST_SKIP() << "the driver did not place the second reservation at the first one's end";
  }
  CUmemGenericAllocationHandle h1 = 0, h2 = 0;
  FS_CU(cuMemCreate(&h1, gran, &prop, 0));
  FS_CU(cuMemCreate(&h2, gran, &prop, 0));
  FS_CU(cuMemMap(first, gran, 0, h1, 0));
  FS_CU(cuMemMap(second, gran, 0, h2, 0));
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  FS_CU(cuMemSetAccess(first, gran, &access, 1));
  FS_CU(cuMemSetAccess(second, gran, &access, 1));

  const CUdeviceptr h = second - hbytes / 32 * 16;  // half of H (16-byte aligned) in each reservation
  FS_CU(cuMemcpyHtoD(h, pb.h.data(), hbytes));
  std::vector<std::int64_t> got;
  std::string error;
  try {
    got = run64(n, [&](const DeviceMemory& o) {
      SampleArgs b = a;
      b.hidden_states = reinterpret_cast<const void*>(h);
      b.out = o.as<void>();
      sampler.sample(b, nullptr);
    });
  } catch (const InvalidArgument& e) {
    error = e.what();
  }
  FS_CU(cuCtxSynchronize());
  FS_CU(cuMemUnmap(first, gran));
  FS_CU(cuMemUnmap(second, gran));
  FS_CU(cuMemRelease(h1));
  FS_CU(cuMemRelease(h2));
  FS_CU(cuMemAddressFree(first, gran));
  FS_CU(cuMemAddressFree(second, gran));
  EXPECT_EQ(error, "") << "H across two adjacent reservations was refused";
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace fusedsample
