// sampler_logits_configs_gpu_test.cpp: Sampler::sample_logits (the unfused
// path's sampler, templates/sample_logits.cuh) gives the same samples under
// every logits config (SamplerOptions::logits_spec: T_V, T_N, the stages of
// its ring, the warps, and so the values each epilogue thread owns per row),
// from rows that start on 16 bytes (its 16-byte copies) and from rows that do
// not (4-byte copies), in launches where each block walks several tiles of
// the same batch rows and some cross into the next batch tile; mixed
// temperatures (greedy rows too) and two samples per row; and they are the
// CPU reference's.
//
// Inputs are random (a fresh seed per test, printed; replay a failure with
// FUSEDSAMPLE_TEST_SEED=<seed>). W ~ N(0, 1), H ~ N(0, (2/sqrt(d))^2), so the
// logits have a standard deviation of about 2.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "runtime/cuda_driver.hpp"
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
using namespace testing::exactness_tests;

TEST(SampleLogitsConfigs, EveryConfigAndRowAlignmentGivesTheReferenceSamples) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
  const DType dtype = DType::bf16;
  const auto specs = testing::logits_configs();  // the default and five forced configs
  struct Shape {
    std::int64_t V, d, N;
    int S;
  };
  // 50000 x 100: 2548 tiles of 256 x 8 (10166 of 64 x 8), more than an H100 or H200 holds at once, so blocks
  // walk several tiles through the ring. 4099: no row past the first starts on 16 bytes.
  for (const Shape& sh : {Shape{50000, 64, 100, 1}, Shape{4099, 64, 17, 2}}) {
    const auto w = testing::random_storage(dtype, std::size_t(sh.V * sh.d), 1.0, rng);
    const auto h = testing::random_storage(dtype, std::size_t(sh.N * sh.d), 2.0 / std::sqrt(double(sh.d)), rng);
    const std::vector<double> exact = testing::host_logits(w, h, dtype, sh.V, sh.d, sh.N);
    const std::vector<float> logits(exact.begin(), exact.end());
    const std::size_t bytes = logits.size() * sizeof(float);
    // The same logits at a 16-byte-aligned address and 4 bytes past one.
    DeviceMemory buffer(bytes + 16);
    const RowParams rows(sh.N, 1, rng);
    const auto ref = reference_sample(w.data(), h.data(), dtype, sh.V, sh.d, sh.N, rows.reference(), sh.S);
    std::optional<std::vector<std::int64_t>> first;
    for (const auto& spec : specs)
      for (const std::size_t shift : {std::size_t(0), std::size_t(4)}) {
        const std::string what = fmt::format("V={} N={} S={} logits_spec [{}] logits at +{} bytes", sh.V, sh.N, sh.S,
                                             spec ? spec->to_string() : "default", shift);
        SCOPED_TRACE(what);
        FS_CU(cuMemsetD8(buffer.get(), 0, buffer.size()));
        FS_CU(cuMemcpyHtoD(buffer.get() + shift, logits.data(), bytes));
        SamplerOptions o = testing::sampler_options(sh.V, sh.d, dtype);
        o.logits_spec = spec;
        Sampler sampler(o);
        const auto got =
            sample_logits_int64(sampler, reinterpret_cast<const float*>(buffer.get() + shift), sh.N, sh.S, rows);
        const auto cmp = testing::compare_with_reference(got, ref, sh.V, sh.S, what);
        if (first) EXPECT_EQ(got, *first) << "another config or alignment changed the samples";
        else first = got;
        std::printf("[ logits   ] %-90s pairs %4lld  near-ties %lld\n", what.c_str(), static_cast<long long>(cmp.pairs),
                    static_cast<long long>(cmp.close));
      }
  }
}

}  // namespace
}  // namespace fusedsample
