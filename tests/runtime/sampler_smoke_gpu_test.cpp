// sampler_smoke_gpu_test.cpp: one small case per dtype against the CPU
// reference; the quickest signal that the fused path works on a GPU.
#include <gtest/gtest.h>

#include "fusedsample/fusedsample.hpp"
#include "runtime/device_memory.hpp"
#include "tests/support/device_buffers.hpp"
#include "tests/support/gpu_test_support.hpp"
#include "tests/support/reference_comparison.hpp"

namespace fusedsample {
namespace {

class SmokeGpu : public ::testing::TestWithParam<DType> {};

TEST_P(SmokeGpu, MatchesReference) {
  FS_REQUIRE_GPU();
  const DType dtype = GetParam();
  const std::int64_t V = 1000 + 3, d = 136, N = 5;
  std::mt19937_64 rng(testing::fresh_seed());
  const auto w = testing::random_storage(dtype, V * d, 1.0, rng);
  const auto h = testing::random_storage(dtype, N * d, 2.0 / std::sqrt(double(d)), rng);
  Sampler sampler({.vocab = V, .hidden = d, .dtype = dtype});
  runtime::DeviceMemory dw(w.size()), dh(h.size()), dout(N * 8);
  dw.upload(w.data(), w.size());
  dh.upload(h.data(), h.size());
  testing::poison(dout);  // a row the kernel never writes cannot pass as a sample
  SampleArgs a;
  a.weights = dw.as<void>();
  a.hidden_states = dh.as<void>();
  a.rows = N;
  a.out = dout.as<void>();
  a.seed = rng();
  a.offset = 42;
  a.temperature = 0.8f;
  sampler.sample(a, nullptr);
  std::vector<std::int64_t> got(N);
  dout.download(got.data(), N * 8);
  std::vector<ReferenceRowParams> rp(N, {a.temperature, a.seed, a.offset});
  const auto ref = reference_sample(w.data(), h.data(), dtype, V, d, N, rp, 1);
  // Decided rows must match; near-ties (either order correct) are capped, so a
  // tolerance loose enough to skip every row fails.
  testing::compare_with_reference(got, ref, V, 1, "smoke " + std::string(to_string(dtype)));
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, SmokeGpu, ::testing::Values(DType::bf16, DType::fp16, DType::fp32),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace fusedsample
