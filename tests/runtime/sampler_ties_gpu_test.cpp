// sampler_ties_gpu_test.cpp: close contests and exact ties, checked against an
// fp32 host computation of the noise contract itself (not the double
// reference, whose near-tie tolerance would skip exactly these rows).
//
// Logits are exact: W[v] = (a_v, 0, ..., 0), H[n] = (c_n, 0, ..., 0), with
// a_v and c_n powers of two and small integers, so every config computes the
// same fp32 logit a_v * c_n. Large logits make the score's rounding coarse
// (ulp 2 at 2^24): many values of a row tie on the best score and the winner
// is decided by the tie rule (the lowest index); their approximate intervals
// overlap, so the epilogues must compute exact scores for all of them.
// Moderate rows (c_n small) mix clear wins and close contests. Every forced
// config and the default must return exactly the host's winners, and so must
// the unfused path's sampler (Sampler::sample_logits) from the same fp32
// logits under every logits config (its take-ups: serial, and two groups per
// warp round since session 63).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "fusedsample/numeric.hpp"
#include "runtime/device_memory.hpp"
#include "templates/fs_params.cuh"
#include "templates/gumbel_race.cuh"
#include "tests/support/device_buffers.hpp"
#include "tests/support/gpu_test_support.hpp"
#include "tests/support/sampler_configs.hpp"

namespace fusedsample {
namespace {

using runtime::DeviceMemory;
using testing::from_device;
using testing::to_device;

// The noise contract in fp32, as the kernels compute it: score =
// fma(l, 1/tau, G), the winner by fs_better; greedy rows take the logit.
std::int64_t host_winner(const std::vector<float>& logits, float tau, std::uint64_t seed, std::uint64_t offset,
                         std::uint32_t sample) {
  const float inv_tau = tau == 0.0f ? 1.0f : 1.0f / tau;
  float best = -INFINITY;
  int bi = FS_NO_INDEX;
  for (std::size_t v = 0; v < logits.size(); ++v) {
    float sc = logits[v];
    if (tau != 0.0f) {
      sc = FS_FMA(logits[v], inv_tau, fs_gumbel_noise(seed, offset, v, sample));
    }
    if (fs_better(sc, int(v), best, bi)) {
      best = sc;
      bi = int(v);
    }
  }
  return bi == FS_NO_INDEX ? -1 : bi;
}

// Samples the N x S (row, sample) pairs with every runnable config and the
// default and expects want's indices from each; describe(row) names a failing
// row's inputs.
struct TieInputs {
  std::int64_t V, d, N;
  int S;
  const DeviceMemory &w, &h, &tau, &seeds, &offsets;
  const DeviceMemory& logits;  // the same logits as fp32 [N][V] (exact: a_v c_n)
};
template <class Describe>
void expect_every_config_gives(const TieInputs& in, DType dtype, const std::vector<std::int64_t>& want,
                               Describe describe) {
  // One launch: `run` samples into args (the rows' parameters and `out` filled in), then every pair is compared.
  const auto check = [&](const std::string& what, const auto& run) {
    SCOPED_TRACE(what);
    DeviceMemory out(std::size_t(in.N * in.S) * 8);
    testing::poison(out);
    SampleArgs args;
    args.rows = in.N;
    args.num_samples = in.S;
    args.temperatures = in.tau.as<const float>();
    args.seeds = in.seeds.as<const std::uint64_t>();
    args.offsets = in.offsets.as<const std::uint64_t>();
    args.out = out.as<void>();
    run(args);
    const std::vector<std::int64_t> got = from_device<std::int64_t>(out, std::size_t(in.N * in.S));
    int wrong = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      if (got[i] != want[i] && wrong++ < 5)
        ADD_FAILURE() << what << ": row " << i / in.S << " sample " << i % in.S << " (" << describe(i / in.S)
                      << "): got " << got[i] << ", want " << want[i];
    EXPECT_EQ(wrong, 0) << what;
  };
  for (const auto& spec : testing::runnable_configs(dtype)) {
    Sampler sampler(testing::sampler_options(in.V, in.d, dtype, spec));
    check(spec ? spec->to_string() : std::string("default"), [&](SampleArgs& args) {
      args.weights = in.w.as<const void>();
      args.hidden_states = in.h.as<const void>();
      sampler.sample(args, nullptr);
    });
  }
  for (const auto& spec : testing::logits_configs()) {
    SamplerOptions o = testing::sampler_options(in.V, in.d, dtype);
    o.logits_spec = spec;
    Sampler sampler(o);
    check("sample_logits " + (spec ? spec->to_string() : std::string("default")),
          [&](SampleArgs& args) { sampler.sample_logits(in.logits.as<const float>(), args, nullptr); });
  }
}

TEST(SamplerTiesGpu, CloseContestsAndTiesMatchTheFp32Contract) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
  const DType dtype = DType::bf16;
  const std::int64_t V = 4099, d = 64, N = 40;
  const int S = 2;
  // a_v: 2^24 for most values, a few integers below it (never the winner at
  // tau = 1 but close under small c_n), and a block of 2^24 + 2^17.
  std::vector<float> a(V, 16777216.0f);
  for (std::int64_t v = 0; v < V; ++v) {
    if (rng() % 8 == 0) a[v] = float(1 << 23) + float(rng() % 4) * 65536.0f;
    if (v >= 3000 && v < 3003) a[v] = 16777216.0f + 131072.0f;
  }
  // c_n: 1 (score ulp 2), 2^-7 (ulp 2^-6), 2^-14 (logit 1024), 2^-20 (logit 16); temperatures cycle.
  const float scales[] = {1.0f, 0.0078125f, 6.103515625e-05f, 9.5367431640625e-07f};
  const float taus[] = {1.0f, 0.5f, 2.0f, 0.0f, 1.0f};
  std::vector<std::uint16_t> w(std::size_t(V * d), 0), h(std::size_t(N * d), 0);
  std::vector<float> c(N), tau(N);
  std::vector<std::uint64_t> seeds(N), offsets(N);
  for (std::int64_t v = 0; v < V; ++v) w[std::size_t(v * d)] = float_to_bf16(a[v]);
  for (std::int64_t n = 0; n < N; ++n) {
    c[n] = scales[n % 4];
    tau[n] = taus[(n / 4) % 5];
    seeds[n] = rng();
    offsets[n] = rng();
    h[std::size_t(n * d)] = float_to_bf16(c[n]);
  }
  for (std::int64_t v = 0; v < V; ++v) ASSERT_EQ(bf16_to_float(w[std::size_t(v * d)]), a[v]) << "a_v not exact in bf16";
  std::vector<std::int64_t> want(std::size_t(N * S));
  std::vector<float> all_logits(std::size_t(N * V));
  for (std::int64_t n = 0; n < N; ++n) {
    std::vector<float> logits(V);
    for (std::int64_t v = 0; v < V; ++v) logits[v] = a[v] * c[n];  // exact: powers of two
    for (int s = 0; s < S; ++s) want[std::size_t(n * S + s)] = host_winner(logits, tau[n], seeds[n], offsets[n], s);
    std::copy(logits.begin(), logits.end(), all_logits.begin() + n * V);
  }
  const DeviceMemory dw = to_device(w), dh = to_device(h), dt = to_device(tau), ds = to_device(seeds),
                     doff = to_device(offsets), dl = to_device(all_logits);
  expect_every_config_gives({V, d, N, S, dw, dh, dt, ds, doff, dl}, dtype, want, [&](std::size_t n) {
    return "c " + std::to_string(c[n]) + ", tau " + std::to_string(tau[n]);
  });
}

// Infinite logits: every +inf logit has the score +inf at any temperature,
// so they all tie and the lowest index wins, for sampled and greedy rows.
// 24 of them, spread over the vocabulary (three in the first one's noise
// group): once a row's bound is +inf (another block folded an infinite
// lead), the register epilogue's threshold T(+inf) is NaN, and its take-ups
// must still fold the lower infinite scores (session 43's first version of
// upper bound 1d did not: it folded a score only when sc >= T).
TEST(SamplerTiesGpu, InfiniteLogitsTieToTheLowestIndex) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
  const DType dtype = DType::bf16;
  const std::int64_t V = 4099, d = 64, N = 24;
  const std::int64_t first = 37;
  std::vector<std::uint16_t> w(std::size_t(V * d), 0), h(std::size_t(N * d), 0);
  std::vector<float> a(V);
  for (std::int64_t v = 0; v < V; ++v) a[v] = float(int(rng() % 33) - 16) * 0.25f;  // exact in bf16
  for (std::int64_t k = 0; k < 24; ++k) a[first + 170 * k] = INFINITY;
  a[first + 1] = a[first + 3] = INFINITY;  // the first one's group (16 tokens from 32) holds three
  for (std::int64_t v = 0; v < V; ++v) w[std::size_t(v * d)] = float_to_bf16(a[v]);
  std::vector<float> tau(N);
  std::vector<std::uint64_t> seeds(N), offsets(N);
  const float taus[] = {1.0f, 0.5f, 2.0f, 0.0f};
  for (std::int64_t n = 0; n < N; ++n) {
    h[std::size_t(n * d)] = float_to_bf16(float(1 + n % 3));  // logit a_v * c_n, +inf stays +inf
    tau[n] = taus[n % 4];
    seeds[n] = rng();
    offsets[n] = rng();
  }
  ASSERT_TRUE(std::isinf(bf16_to_float(w[std::size_t(first * d)])));
  const int S = 2;
  std::vector<float> logits(std::size_t(N * V));
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t v = 0; v < V; ++v) logits[std::size_t(n * V + v)] = a[v] * float(1 + n % 3);  // exact
  const DeviceMemory dw = to_device(w), dh = to_device(h), dt = to_device(tau), ds = to_device(seeds),
                     doff = to_device(offsets), dl = to_device(logits);
  const std::vector<std::int64_t> want(std::size_t(N * S), first);
  expect_every_config_gives({V, d, N, S, dw, dh, dt, ds, doff, dl}, dtype, want,
                            [&](std::size_t n) { return "tau " + std::to_string(tau[n]); });
}

}  // namespace
}  // namespace fusedsample
