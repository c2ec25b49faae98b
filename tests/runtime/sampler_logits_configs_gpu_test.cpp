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

// Infinite logits tie to the lowest index (docs/rng.md sections 5, 6) in
// launches whose blocks walk several tiles and cross into the next batch
// tile: the block that reaches a batch tile's first vocabulary tile last
// starts its rows with the bound +inf that the other blocks of those rows
// folded after their first tiles (an infinity every 211 values, so in every
// tile). The owner epilogue's threshold T(+inf) was NaN and its vote
// st >= T dropped every value, the row's first infinity too, so another
// block's larger index won.
TEST(SampleLogitsConfigs, InfiniteLogitsTieToTheLowestIndexAcrossBlocks) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
  const std::optional<std::string> specs[] = {std::nullopt, "fp32 sm_90 logits tv256 tn8 td64 s4 w4x1",
                                              "fp32 sm_90 logits tv512 tn8 td64 s2 w4x1",
                                              "fp32 sm_90 logits tv128 tn32 td64 s2 w4x2"};
  struct Shape {
    std::int64_t V, N;
    int S;
  };
  const std::int64_t first = 37, period = 211;
  // 391 x 8 tiles of 256 x 8 (small default), 98 x 38 of 512 x 8 (large default), and two samples.
  for (const Shape& sh : {Shape{100003, 64, 1}, Shape{50021, 300, 1}, Shape{100003, 40, 2}}) {
    std::normal_distribution<float> normal(0.0f, 2.0f);
    std::vector<float> logits(std::size_t(sh.N * sh.V));
    for (float& l : logits) l = normal(rng);
    for (std::int64_t n = 0; n < sh.N; ++n)
      for (std::int64_t v = first; v < sh.V; v += period) logits[std::size_t(n * sh.V + v)] = INFINITY;
    const DeviceMemory dl = testing::to_device(logits);
    const RowParams rows(sh.N, 2, rng);
    const std::vector<std::int64_t> want(std::size_t(sh.N * sh.S), first);
    for (const auto& spec : specs) {
      const std::string what =
          fmt::format("V={} N={} S={} logits_spec [{}]", sh.V, sh.N, sh.S, spec ? *spec : "default");
      SCOPED_TRACE(what);
      SamplerOptions o = testing::sampler_options(sh.V, 64, DType::bf16);
      if (spec) o.logits_spec = KernelSpec::parse(*spec);
      Sampler sampler(o);
      const auto got = sample_logits_int64(sampler, dl.as<const float>(), sh.N, sh.S, rows);
      std::int64_t wrong = 0;
      for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i] && wrong++ < 8)
          ADD_FAILURE() << "row " << i / std::size_t(sh.S) << " sample " << i % std::size_t(sh.S) << ": " << got[i]
                        << ", want " << first << " (tau " << rows.temperatures[i / std::size_t(sh.S)] << ")";
      EXPECT_EQ(wrong, 0) << "of " << got.size();
    }
  }
}

}  // namespace
}  // namespace fusedsample
