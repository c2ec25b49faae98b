// sampler_exactness_gpu_test.cpp: the fused sampler picks exactly the CPU
// reference's token (same Philox/Gumbel noise, double-precision logits) for
// every (row, sample) whose reference top-2 gap exceeds the reference's
// rounding tolerance, over many shapes, every dtype and every forced tile
// config (ExactnessGpu).
//
// Inputs are random (a fresh seed per test, printed; replay a failure with
// FUSEDSAMPLE_TEST_SEED=<seed>). W ~ N(0, 1), H ~ N(0, (2/sqrt(d))^2), so the
// logits have a standard deviation of about 2.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "runtime/device_memory.hpp"
#include "tests/support/device_buffers.hpp"
#include "tests/support/exactness_inputs.hpp"
#include "tests/support/gpu_test_support.hpp"
#include "tests/support/reference_comparison.hpp"
#include "tests/support/sampler_configs.hpp"

namespace fusedsample {
namespace {

using runtime::DeviceMemory;
using testing::to_device_bytes;
using namespace testing::exactness_tests;

// V not a multiple of any T_V (1, 7, 100, 1000, 4099, 32013, 70001); N not a
// multiple of T_N (N = 200: the batch bucket 224, tiles fitted to the batch;
// N = 300: two parts of 150, the bucket 160; the last batch tile partial, copied
// through H's tail map by the TMA-fed variants);
// d a multiple of 8, 520 not a multiple of 16 or of any T_d.
// V * d * N <= 2.2e8 per case keeps the double-precision reference cheap.
// V = 70001 gives every block of a persistent grid (one block per SM on an
// H100 or H200 for the register epilogue) two or more tiles even at T_V =
// 256, so the code of a block's later tiles (bounds read back from p.best,
// no lead pass) runs too; the smaller shapes give most blocks one.
constexpr Shape kShapes[] = {
    {1, 64, 3, 3},      {7, 256, 17, 1},     {7, 64, 1, 3},        {100, 520, 100, 3},  {1000, 64, 256, 1},
    {1000, 256, 3, 3},  {4099, 256, 16, 3},  {4099, 520, 100, 1},  {32013, 520, 1, 3},  {32013, 64, 64, 1},
    {70001, 64, 40, 1},  {4099, 256, 200, 1}, {1000, 64, 300, 3},
};

// Random W [Vmax(d), d] and H [Nmax(d), d] for each d the shapes use; a case
// takes the first V rows of W and the first N rows of H.
struct Inputs {
  DType dtype;
  std::vector<std::int64_t> ds;
  std::vector<std::vector<std::uint8_t>> w, h;

  Inputs(DType dt, std::mt19937_64& rng, const std::vector<Shape>& shapes) : dtype(dt) {
    for (const Shape& s : shapes)
      if (std::find(ds.begin(), ds.end(), s.d) == ds.end()) ds.push_back(s.d);
    for (std::int64_t d : ds) {
      std::int64_t vmax = 0, nmax = 0;
      for (const Shape& s : shapes)
        if (s.d == d) {
          vmax = std::max(vmax, s.V);
          nmax = std::max(nmax, s.N);
        }
      w.push_back(testing::random_storage(dtype, std::size_t(vmax * d), 1.0, rng));
      h.push_back(testing::random_storage(dtype, std::size_t(nmax * d), 2.0 / std::sqrt(double(d)), rng));
    }
  }
  std::size_t slot(std::int64_t d) const { return std::size_t(std::find(ds.begin(), ds.end(), d) - ds.begin()); }
  const std::vector<std::uint8_t>& W(std::int64_t d) const { return w[slot(d)]; }
  const std::vector<std::uint8_t>& H(std::int64_t d) const { return h[slot(d)]; }
};

// ---------------------------------------------------------------------------
// Exactness over shapes x (dtype, config)
// ---------------------------------------------------------------------------

struct ExactParam {
  DType dtype;
  std::optional<KernelSpec> spec;  // nullopt: the built-in heuristic
};

void PrintTo(const ExactParam& p, std::ostream* os) { *os << to_string(p.dtype) << " " << config_name(p.spec); }

std::vector<ExactParam> exact_params() {
  std::vector<ExactParam> out;
  for (DType dt : {DType::bf16, DType::fp16, DType::fp32}) {
    out.push_back({dt, std::nullopt});
    for (const KernelSpec& s : testing::forced_specs(dt)) out.push_back({dt, s});
  }
  return out;
}

class ExactnessGpu : public ::testing::TestWithParam<ExactParam> {};

TEST_P(ExactnessGpu, MatchesReferenceOnManyShapes) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  const ExactParam& param = GetParam();
  if (param.spec && !testing::spec_runs_here(*param.spec))
    GTEST_SKIP() << param.spec->to_string() << " needs a Hopper GPU (compute capability 9.0)";
  const DType dtype = param.dtype;
  std::mt19937_64 rng(testing::fresh_seed());
  const std::vector<Shape> shapes(std::begin(kShapes), std::end(kShapes));
  const Inputs in(dtype, rng, shapes);

  std::int64_t total_pairs = 0, total_close = 0;
  for (std::size_t c = 0; c < shapes.size(); ++c) {
    const Shape& sh = shapes[c];
    const std::string what = fmt::format("{} {} V={} d={} N={} S={}", to_string(dtype), config_name(param.spec),
                                         sh.V, sh.d, sh.N, sh.S);
    SCOPED_TRACE(what);
    Sampler sampler(testing::sampler_options(sh.V, sh.d, dtype, param.spec));
    if (param.spec) {
      KernelSpec want = *param.spec;
      want.arch = sampler.spec_for(sh.N).arch;
      EXPECT_TRUE(sampler.spec_for(sh.N) == want)
          << "the sampler uses [" << sampler.spec_for(sh.N).to_string() << "], not the forced [" << want.to_string() << "]";
    }
    const void* w = in.W(sh.d).data();
    const void* h = in.H(sh.d).data();
    const DeviceMemory dw = to_device_bytes(w, std::size_t(sh.V * sh.d) * dtype_size(dtype));
    const DeviceMemory dh = to_device_bytes(h, std::size_t(sh.N * sh.d) * dtype_size(dtype));
    const RowParams rows(sh.N, c, rng);

    const std::vector<std::int64_t> got = sample_int64(sampler, dw, dh, sh.N, sh.S, rows);
    const std::vector<ReferenceResult> ref =
        reference_sample(w, h, dtype, sh.V, sh.d, sh.N, rows.reference(), sh.S);
    const testing::Comparison cmp = testing::compare_with_reference(got, ref, sh.V, sh.S, what);
    std::printf("[ case     ] %-48s pairs %5lld  near-ties %lld  mismatches %lld\n", what.c_str(),
                static_cast<long long>(cmp.pairs), static_cast<long long>(cmp.close),
                static_cast<long long>(cmp.mismatches));
    total_pairs += cmp.pairs;
    total_close += cmp.close;
  }
  std::printf("[ summary  ] %s %s: %lld (row, sample) pairs, %lld near-ties skipped\n", std::string(to_string(dtype)).c_str(),
              config_name(param.spec).c_str(), static_cast<long long>(total_pairs),
              static_cast<long long>(total_close));
  EXPECT_LE(double(total_close), 0.02 * double(total_pairs) + 1.0);
}

INSTANTIATE_TEST_SUITE_P(AllConfigs, ExactnessGpu, ::testing::ValuesIn(exact_params()),
                         [](const ::testing::TestParamInfo<ExactParam>& info) {
                           return std::string(to_string(info.param.dtype)) + "_" + config_name(info.param.spec);
                         });

}  // namespace
}  // namespace fusedsample
