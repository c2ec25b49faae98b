// sampler_api_problem.hpp: the fixture, random head and batch of the Sampler
// API GPU tests (tests/runtime/sampler_api_*_gpu_test.cpp), a call into a
// fresh poisoned output, and checks of the indices that come back.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "runtime/device_memory.hpp"
#include "tests/support/device_buffers.hpp"
#include "tests/support/gpu_test_support.hpp"

namespace fusedsample::testing::sampler_api_tests {

// What the test files use beside this header's own, so that
// `using namespace testing::sampler_api_tests;` is all they need.
using runtime::DeviceMemory;
using testing::from_device;
using testing::to_device;

// The SamplerApiGpu tests' fixture: skips without a usable GPU (never fails
// there), keeps the process's primary context retained for the whole binary
// (testing::use_process_context), and seeds `rng` fresh for each test (the
// seed is printed: FUSEDSAMPLE_TEST_SEED replays it).
class SamplerApiGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    FS_REQUIRE_GPU();
    testing::use_process_context();
    rng.seed(testing::fresh_seed());
  }
  std::mt19937_64 rng;
};

// Random W [V, d] and H [N, d] on host and device. V = 5003 is not a multiple
// of any T_V, d = 136 not a multiple of 16, N = 37 not a multiple of T_N.
struct Problem {
  DType dtype;
  std::int64_t V, d, N;
  std::vector<std::uint8_t> w, h;
  DeviceMemory dw, dh;

  Problem(DType dt, std::mt19937_64& rng, std::int64_t v = 5003, std::int64_t dd = 136, std::int64_t n = 37)
      : dtype(dt), V(v), d(dd), N(n) {
    w = testing::random_storage(dtype, std::size_t(V * d), 1.0, rng);
    h = testing::random_storage(dtype, std::size_t(N * d), 2.0 / std::sqrt(double(d)), rng);
    dw = to_device(w);
    dh = to_device(h);
  }
  // The call's arguments without an output (sample_both_index_types sets it).
  SampleArgs args(int S) const {
    SampleArgs a;
    a.weights = dw.as<const void>();
    a.hidden_states = dh.as<const void>();
    a.rows = N;
    a.num_samples = S;
    return a;
  }
  SampleArgs args(const DeviceMemory& out, int S, IndexType type = IndexType::int64) const {
    SampleArgs a = args(S);
    a.out = out.as<void>();
    a.index_type = type;
    return a;
  }
};

// Runs `call` into a fresh poisoned int64 buffer of n elements and returns it.
template <typename F>
std::vector<std::int64_t> run64(std::size_t n, F&& call) {
  DeviceMemory out(n * 8);
  testing::poison(out);
  call(out);
  return from_device<std::int64_t>(out, n);
}

// The call `a` (its out and index_type replaced) into fresh poisoned int64
// and int32 outputs of n elements, in that order; both results, the int32
// one widened.
struct IndexOutputs {
  std::vector<std::int64_t> i64, i32;
};
inline IndexOutputs sample_both_index_types(Sampler& sampler, SampleArgs a, std::size_t n) {
  DeviceMemory out64(n * 8), out32(n * 4);
  testing::poison(out64);
  testing::poison(out32);
  a.out = out64.as<void>();
  a.index_type = IndexType::int64;
  sampler.sample(a, nullptr);
  a.out = out32.as<void>();
  a.index_type = IndexType::int32;
  sampler.sample(a, nullptr);
  IndexOutputs r{from_device<std::int64_t>(out64, n), {}};
  for (std::int32_t v : from_device<std::int32_t>(out32, n)) r.i32.push_back(v);
  return r;
}

// sampler.sample(args into a fresh poisoned output of n indices, legacy
// stream); the indices that come back.
inline std::vector<std::int64_t> sample_fresh(Sampler& sampler, const SampleArgs& args, std::size_t n) {
  return run64(n, [&](const DeviceMemory& out) {
    SampleArgs b = args;
    b.out = out.as<void>();
    sampler.sample(b, nullptr);
  });
}

inline std::size_t count_differences(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
  return n;
}

inline void expect_all_in_range(const std::vector<std::int64_t>& got, std::int64_t V, const std::string& what) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] < 0 || got[i] >= V) {
      if (++bad <= 5) ADD_FAILURE() << what << ": element " << i << " = " << got[i] << " (V=" << V << ")";
    }
  EXPECT_EQ(bad, 0u) << what;
}

// One `sampler.sample(args)` captured on `stream` in global mode into
// graph.g, instantiated into exec.e. An exception ends the capture (its graph
// dropped) and propagates.
inline void capture_sample(Sampler& sampler, const SampleArgs& args, const testing::StreamGuard& stream,
                           testing::GraphGuard& graph, testing::GraphExecGuard& exec) {
  FS_CU(cuStreamBeginCapture(stream.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  try {
    sampler.sample(args, stream.get());
  } catch (...) {
    CUgraph g = nullptr;
    driver::api().cuStreamEndCapture(stream.s, &g);
    if (g) driver::api().cuGraphDestroy(g);
    throw;
  }
  FS_CU(cuStreamEndCapture(stream.s, &graph.g));
  ASSERT_NE(graph.g, nullptr);
  FS_CU(cuGraphInstantiate(&exec.e, graph.g, 0));
}

}  // namespace fusedsample::testing::sampler_api_tests
