// sampler_dtype_gpu_test.cpp: per-dtype properties of the fused sampler
// (DtypeGpu): tile configs do not change the samples; greedy rows are the
// argmax; the unfused path (sample_logits) agrees with the reference too.
//
// Inputs are random (a fresh seed per test, printed; replay a failure with
// FUSEDSAMPLE_TEST_SEED=<seed>). W ~ N(0, 1), H ~ N(0, (2/sqrt(d))^2), so the
// logits have a standard deviation of about 2.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "runtime/device_memory.hpp"
#include "tests/support/device_buffers.hpp"
#include "tests/support/exactness_inputs.hpp"
#include "tests/support/gpu_test_support.hpp"
#include "tests/support/host_logits.hpp"
#include "tests/support/reference_comparison.hpp"
#include "tests/support/sampler_configs.hpp"

namespace fusedsample {
namespace {

using runtime::DeviceMemory;
using testing::from_device;
using testing::to_device;
using namespace testing::exactness_tests;

// ---------------------------------------------------------------------------
// Per-dtype properties
// ---------------------------------------------------------------------------

class DtypeGpu : public ::testing::TestWithParam<DType> {};

// The same call under every forced tile config and the default returns
// bitwise identical samples: the logits' fp32 accumulation order and the
// tie-breaking (higher score, then lower index) do not depend on the tiling.
TEST_P(DtypeGpu, TileConfigsGiveIdenticalSamples) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  const DType dtype = GetParam();
  std::mt19937_64 rng(testing::fresh_seed());
  const std::int64_t V = 4099, d = 520, N = 100;
  const int S = 3;
  const auto w = testing::random_storage(dtype, std::size_t(V * d), 1.0, rng);
  const auto h = testing::random_storage(dtype, std::size_t(N * d), 2.0 / std::sqrt(double(d)), rng);
  const DeviceMemory dw = to_device(w), dh = to_device(h);
  const RowParams rows(N, 0, rng);

  const std::vector<std::optional<KernelSpec>> configs = testing::runnable_configs(dtype);
  std::vector<std::int64_t> first;
  for (const auto& spec : configs) {
    SCOPED_TRACE(config_name(spec));
    Sampler sampler(testing::sampler_options(V, d, dtype, spec));
    const std::vector<std::int64_t> got = sample_int64(sampler, dw, dh, N, S, rows);
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_TRUE(got[i] >= 0 && got[i] < V) << "pair " << i << ": " << got[i];
    if (first.empty()) {
      first = got;
      continue;
    }
    std::size_t differ = 0;
    for (std::size_t i = 0; i < got.size(); ++i) differ += got[i] != first[i];
    EXPECT_EQ(differ, 0u) << config_name(spec) << " differs from " << config_name(configs[0]) << " in " << differ
                          << " of " << got.size() << " samples";
  }
}

// Temperature 0 is the argmax of the logits: equal to the reference with
// temperature 0, the same for every sample of a row and independent of the
// seed and offset. Scalar and per-row zero temperatures agree.
TEST_P(DtypeGpu, GreedyRowsAreTheArgmax) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  const DType dtype = GetParam();
  std::mt19937_64 rng(testing::fresh_seed());
  const std::int64_t V = 32013, d = 256, N = 17;
  const int S = 3;
  const auto w = testing::random_storage(dtype, std::size_t(V * d), 1.0, rng);
  const auto h = testing::random_storage(dtype, std::size_t(N * d), 2.0 / std::sqrt(double(d)), rng);
  const DeviceMemory dw = to_device(w), dh = to_device(h);
  Sampler sampler(testing::sampler_options(V, d, dtype));

  // Scalar temperature 0 with a scalar seed.
  DeviceMemory out_scalar(std::size_t(N * S) * 8);
  testing::poison(out_scalar);
  SampleArgs a;
  a.weights = dw.as<const void>();
  a.hidden_states = dh.as<const void>();
  a.rows = N;
  a.num_samples = S;
  a.temperature = 0.0f;
  a.seed = rng();
  a.offset = rng();
  a.out = out_scalar.as<void>();
  sampler.sample(a, nullptr);
  const auto got_scalar = from_device<std::int64_t>(out_scalar, std::size_t(N * S));

  // Per-row zero temperatures with per-row seeds and offsets.
  RowParams rows(N, 0, rng);
  std::fill(rows.temperatures.begin(), rows.temperatures.end(), 0.0f);
  rows.d_temperatures = to_device(rows.temperatures);
  const auto got_rows = sample_int64(sampler, dw, dh, N, S, rows);

  EXPECT_EQ(got_scalar, got_rows) << "greedy samples depend on the seed/offset or on scalar vs per-row parameters";
  for (std::int64_t n = 0; n < N; ++n)
    for (int s = 1; s < S; ++s)
      EXPECT_EQ(got_scalar[std::size_t(n * S + s)], got_scalar[std::size_t(n * S)]) << "row " << n << " sample " << s;

  const auto ref = reference_sample(w.data(), h.data(), dtype, V, d, N, rows.reference(), S);
  const auto cmp = testing::compare_with_reference(got_scalar, ref, V, S, "greedy");
  std::printf("[ greedy   ] %s: %lld pairs, %lld near-ties\n", std::string(to_string(dtype)).c_str(),
              static_cast<long long>(cmp.pairs), static_cast<long long>(cmp.close));

  // Independently of the reference's noise path: the argmax of exact logits.
  const std::vector<double> logits = testing::host_logits(w, h, dtype, V, d, N);
  for (std::int64_t n = 0; n < N; ++n) {
    const double* row = &logits[std::size_t(n * V)];
    const std::int64_t best = std::max_element(row, row + V) - row;
    if (ref[std::size_t(n * S)].best - ref[std::size_t(n * S)].runner_up < ref[std::size_t(n * S)].tolerance) continue;
    EXPECT_EQ(got_scalar[std::size_t(n * S)], best) << "row " << n;
  }
}

// The unfused path: fp32 logits computed on the CPU (double, rounded to
// float) and sampled with Sampler::sample_logits match the reference sample
// of the same W and H under the same rule.
TEST_P(DtypeGpu, SampleLogitsMatchesReference) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  const DType dtype = GetParam();
  std::mt19937_64 rng(testing::fresh_seed());
  for (const Shape& sh : {Shape{4099, 256, 17, 3}, Shape{1000, 520, 64, 1}, Shape{7, 64, 3, 3}}) {
    const std::string what = fmt::format("sample_logits {} V={} d={} N={} S={}", to_string(dtype), sh.V, sh.d, sh.N, sh.S);
    SCOPED_TRACE(what);
    const auto w = testing::random_storage(dtype, std::size_t(sh.V * sh.d), 1.0, rng);
    const auto h = testing::random_storage(dtype, std::size_t(sh.N * sh.d), 2.0 / std::sqrt(double(sh.d)), rng);
    const std::vector<double> exact = testing::host_logits(w, h, dtype, sh.V, sh.d, sh.N);
    std::vector<float> logits(exact.begin(), exact.end());
    const DeviceMemory dl = to_device(logits);
    const RowParams rows(sh.N, 1, rng);
    Sampler sampler(testing::sampler_options(sh.V, sh.d, dtype));
    const auto got = sample_logits_int64(sampler, dl.as<const float>(), sh.N, sh.S, rows);
    const auto ref = reference_sample(w.data(), h.data(), dtype, sh.V, sh.d, sh.N, rows.reference(), sh.S);
    const auto cmp = testing::compare_with_reference(got, ref, sh.V, sh.S, what);
    std::printf("[ unfused  ] %-48s pairs %4lld  near-ties %lld\n", what.c_str(), static_cast<long long>(cmp.pairs),
                static_cast<long long>(cmp.close));
  }
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, DtypeGpu, ::testing::Values(DType::bf16, DType::fp16, DType::fp32),
                         [](const ::testing::TestParamInfo<DType>& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace fusedsample
