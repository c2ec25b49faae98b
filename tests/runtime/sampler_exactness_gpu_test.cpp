// sampler_exactness_gpu_test.cpp: the fused sampler picks exactly the CPU
// reference's token (same Philox/Gumbel noise, double-precision logits) for
// every (row, sample) whose reference top-2 gap exceeds the reference's
// rounding tolerance, over many shapes, every dtype and several forced tile
// configs; tile configs do not change the samples; greedy rows are the argmax;
// the unfused path (sample_logits) agrees with the reference too.
//
// Inputs are random (a fresh seed per test, printed; replay a failure with
// FUSEDSAMPLE_TEST_SEED=<seed>). W ~ N(0, 1), H ~ N(0, (2/sqrt(d))^2), so the
// logits have a standard deviation of about 2.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "runtime/device_memory.hpp"
#include "templates/stream_k.cuh"
#include "tests/support/gpu_test_support.hpp"
#include "tests/support/sampler_test_helpers.hpp"

namespace fusedsample {
namespace {

using runtime::DeviceMemory;
using testing::from_device;
using testing::to_device;
using testing::to_device_bytes;

struct Shape {
  std::int64_t V, d, N;
  int S;
};

// V not a multiple of any T_V (1, 7, 100, 1000, 4099, 32013, 70001); N not a
// multiple of T_N; d a multiple of 8, 520 not a multiple of 16 or of any T_d.
// V * d * N <= 2.2e8 per case keeps the double-precision reference cheap.
// V = 70001 gives every block of a persistent grid (one block per SM on an
// H100 or H200 for the register epilogue) two or more tiles even at T_V =
// 256, so the code of a block's later tiles (bounds read back from p.best,
// no lead pass) runs too; the smaller shapes give most blocks one.
constexpr Shape kShapes[] = {
    {1, 64, 3, 3},      {7, 256, 17, 1},     {7, 64, 1, 3},        {100, 520, 100, 3},  {1000, 64, 256, 1},
    {1000, 256, 3, 3},  {4099, 256, 16, 3},  {4099, 520, 100, 1},  {32013, 520, 1, 3},  {32013, 64, 64, 1},
    {70001, 64, 40, 1},
};

constexpr float kTemperatureCycle[] = {0.5f, 1.0f, 2.0f, 0.0f, 0.7f};

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

// Per-row device parameters: mixed temperatures (0 = greedy), random 64-bit
// seeds and offsets.
struct RowParams {
  std::vector<float> temperatures;
  std::vector<std::uint64_t> seeds, offsets;
  DeviceMemory d_temperatures, d_seeds, d_offsets;

  RowParams(std::int64_t N, std::size_t phase, std::mt19937_64& rng) {
    for (std::int64_t n = 0; n < N; ++n) {
      temperatures.push_back(kTemperatureCycle[(std::size_t(n) + phase) % std::size(kTemperatureCycle)]);
      seeds.push_back(rng());
      offsets.push_back(rng());
    }
    d_temperatures = to_device(temperatures);
    d_seeds = to_device(seeds);
    d_offsets = to_device(offsets);
  }
  std::vector<ReferenceRowParams> reference() const {
    std::vector<ReferenceRowParams> r;
    for (std::size_t n = 0; n < temperatures.size(); ++n) r.push_back({temperatures[n], seeds[n], offsets[n]});
    return r;
  }
  void fill(SampleArgs& a) const {
    a.temperatures = d_temperatures.as<const float>();
    a.seeds = d_seeds.as<const std::uint64_t>();
    a.offsets = d_offsets.as<const std::uint64_t>();
  }
};

// Random W [V, d] ~ N(0, 1) and H [N, d] ~ N(0, h_std^2), on the host and the device.
struct RandomInputs {
  std::vector<std::uint8_t> w, h;
  DeviceMemory dw, dh;
  RandomInputs(DType dtype, std::int64_t V, std::int64_t d, std::int64_t N, double h_std, std::mt19937_64& rng)
      : w(testing::random_storage(dtype, std::size_t(V * d), 1.0, rng)),
        h(testing::random_storage(dtype, std::size_t(N * d), h_std, rng)),
        dw(to_device(w)),
        dh(to_device(h)) {}
};

std::string config_name(const std::optional<KernelSpec>& spec) {
  return spec ? testing::tiles_name(*spec) : std::string("default");
}

// Runs `sampler.sample` into a poisoned int64 buffer and returns the [N*S] result.
std::vector<std::int64_t> sample_int64(Sampler& sampler, const DeviceMemory& dw, const DeviceMemory& dh,
                                       std::int64_t N, int S, const RowParams& rows) {
  DeviceMemory out(std::size_t(N * S) * 8);
  testing::poison(out);
  SampleArgs a;
  a.weights = dw.as<const void>();
  a.hidden_states = dh.as<const void>();
  a.rows = N;
  a.num_samples = S;
  rows.fill(a);
  a.out = out.as<void>();
  sampler.sample(a, nullptr);
  return from_device<std::int64_t>(out, std::size_t(N * S));
}

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

// The epilogue's exact skip (templates/epilogue.cuh): a group of four logits
// whose l / tau + FS_GUMBEL_MAX is below the running best draws no noise. With
// logits of standard deviation ~16 at temperature 1 nearly every group is
// skipped; the samples must still be the CPU reference's (which draws all
// noise), for the default config and every forced one.
TEST(ExactnessSkipRule, WideLogitsMatchReference) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
  const DType dtype = DType::bf16;
  const std::int64_t V = 32013, d = 64, N = 24;
  const int S = 3;
  const RandomInputs in(dtype, V, d, N, 16.0 / std::sqrt(double(d)), rng);
  RowParams rows(N, 1, rng);
  for (float& t : rows.temperatures) t = t == 0.0f ? 0.0f : 1.0f;  // keep the greedy rows
  rows.d_temperatures = to_device(rows.temperatures);
  const std::vector<ReferenceResult> ref = reference_sample(in.w.data(), in.h.data(), dtype, V, d, N, rows.reference(), S);
  const std::vector<std::optional<KernelSpec>> specs = testing::runnable_configs(dtype);
  for (const auto& spec : specs) {
    const std::string what = "wide logits " + config_name(spec);
    SCOPED_TRACE(what);
    Sampler sampler(testing::sampler_options(V, d, dtype, spec));
    const auto got = sample_int64(sampler, in.dw, in.dh, N, S, rows);
    const testing::Comparison cmp = testing::compare_with_reference(got, ref, V, S, what);
    EXPECT_EQ(cmp.mismatches, 0) << what;
  }
}

// Greedy rows whose every logit is negative, V = 1000 (the last vocabulary
// tile runs past V, where the kernels compute zero logits from zero-filled
// rows): a greedy bound taken from a tile's largest logits (the register
// epilogue's tests, epilogue_registers.cuh) must leave those rows out, or a
// zero would rule out every real token of the tile. W >= 0, H <= 0; N = 256
// covers two 128-column batch tiles. Every runnable config.
TEST(ExactnessGreedy, NegativeLogitsIgnoreRowsPastTheVocabulary) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
  const DType dtype = DType::bf16;
  const std::int64_t V = 1000, d = 64, N = 256;
  RandomInputs in(dtype, V, d, N, 1.0 / std::sqrt(double(d)), rng);
  for (std::size_t i = 1; i < in.w.size(); i += 2) in.w[i] &= 0x7f;  // bf16 sign bit: the high byte's top bit
  for (std::size_t i = 1; i < in.h.size(); i += 2) in.h[i] |= 0x80;
  in.dw = to_device(in.w);
  in.dh = to_device(in.h);
  RowParams rows(N, 0, rng);
  for (float& t : rows.temperatures) t = 0.0f;
  rows.d_temperatures = to_device(rows.temperatures);
  const std::vector<ReferenceResult> ref = reference_sample(in.w.data(), in.h.data(), dtype, V, d, N, rows.reference(), 1);
  for (const auto& spec : testing::runnable_configs(dtype)) {
    const std::string what = "negative greedy logits " + config_name(spec);
    SCOPED_TRACE(what);
    Sampler sampler(testing::sampler_options(V, d, dtype, spec));
    const auto got = sample_int64(sampler, in.dw, in.dh, N, 1, rows);
    const testing::Comparison cmp = testing::compare_with_reference(got, ref, V, 1, what);
    EXPECT_EQ(cmp.mismatches, 0) << what;
    EXPECT_LE(cmp.close, N / 2) << what << ": too many near-ties to check";
  }
}

// Stream-K specs (templates/stream_k.cuh) on a shape whose last waves are
// cut along the depth (d = 520: nine k-steps, cuts at uneven k): the block
// that samples a cut tile adds the partial sums another block computed. The
// samples must be the reference's, for 64 and 128 accumulators per consumer,
// logits staged in shared memory and in L2, the register epilogue (the
// consumers sample each tile they finish: with tiles dealt whole first, and
// with every block starting on a cut tile), several samples and greedy rows,
// twice in a row (the flags are zero again after a launch).
TEST(ExactnessStreamK, CutTilesMatchReference) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  const std::vector<KernelSpec> specs = {
      testing::make_wgmma_coop_spec(DType::bf16, 128, 64, 4, 20, 1, 64, false, true),
      testing::make_wgmma_coop_spec(DType::bf16, 256, 128, 4, 12, 1, 64, true, true),
      testing::make_wgmma_coop_spec(DType::bf16, 128, 128, 4, 12, 1, 64, false, true, true),
      testing::make_wgmma_coop_spec(DType::bf16, 256, 128, 4, 12, 1, 64, false, true, true),
      testing::make_wgmma_coop_spec(DType::bf16, 128, 256, 4, 12, 1, 64, false, true, true)};
  if (!testing::spec_runs_here(specs[0])) GTEST_SKIP() << "stream-K specs need a Hopper GPU (compute capability 9.0)";
  std::mt19937_64 rng(testing::fresh_seed());
  const DType dtype = DType::bf16;
  const std::int64_t V = 25000, d = 520, N = 200;
  const int S = 2;
  const RandomInputs in(dtype, V, d, N, 2.0 / std::sqrt(double(d)), rng);
  const RowParams rows(N, 2, rng);
  const std::vector<ReferenceResult> ref = reference_sample(in.w.data(), in.h.data(), dtype, V, d, N, rows.reference(), S);
  const int sms = list_devices()[0].multiprocessors;
  for (const KernelSpec& spec : specs) {
    const std::string what = config_name(spec);
    SCOPED_TRACE(what);
    const fs_i64 tiles = (V + spec.tile_v - 1) / spec.tile_v * ((N + spec.tile_n - 1) / spec.tile_n);
    const fs_sk_schedule sched = fs_sk_make(tiles, int((d + spec.tile_d - 1) / spec.tile_d), sms);
    EXPECT_GT(sched.sk_tiles, 0) << tiles << " tiles on " << sms << " blocks: nothing is cut";
    Sampler sampler(testing::sampler_options(V, d, dtype, spec));
    for (int round = 0; round < 2; ++round) {
      const auto got = sample_int64(sampler, in.dw, in.dh, N, S, rows);
      const testing::Comparison cmp = testing::compare_with_reference(got, ref, V, S, what);
      EXPECT_EQ(cmp.mismatches, 0) << what << " round " << round;
      std::printf("[ case     ] %s round %d: %lld tiles, %lld of them in the stream-K part; pairs %lld near-ties %lld\n",
                  what.c_str(), round, static_cast<long long>(tiles), static_cast<long long>(sched.sk_tiles),
                  static_cast<long long>(cmp.pairs), static_cast<long long>(cmp.close));
    }
  }
}

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

    DeviceMemory out(std::size_t(sh.N * sh.S) * 8);
    testing::poison(out);
    SampleArgs a;
    a.rows = sh.N;
    a.num_samples = sh.S;
    rows.fill(a);
    a.out = out.as<void>();
    sampler.sample_logits(dl.as<const float>(), a, nullptr);
    const auto got = from_device<std::int64_t>(out, std::size_t(sh.N * sh.S));
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
