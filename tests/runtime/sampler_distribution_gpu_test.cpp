// sampler_distribution_gpu_test.cpp: the fused sampler draws from
// softmax(logits / temperature). Chi-squared goodness of fit of millions of
// samples against the probabilities computed in double from the stored bf16
// W and H, at V = 100, 4096 and 151936.
//
// Design: d = 64, bf16. h[0] = 1 and h[k>0] ~ N(0, 0.01^2); W[v][0] carries a
// designed logit (times the temperature) and W[v][k>0] ~ N(0, 1) adds a small
// random part (none for the top token), so the logits are known exactly on the host yet come out of a
// real matmul. Up to 256 "live" tokens (all of them when V < 256) spread
// over the vocabulary hold the mass: the top four ~0.4, 0.2, 0.1, 0.05 and the
// rest ~0.25 shared with a +-1 jitter in log space; every other token sits 40
// (in units of the temperature) below and can never win: its probability is
// < 1e-12, a sample of one is a failure on its own.
//
// Every row uses the same hidden vector with its own random seed, S = 16
// samples per row, and several calls with different offsets accumulate the
// counts; each call's work (rows * S * ceil(V / T_V) tile winners) stays
// under ~80M so no single launch runs long. The sample count is large enough that a 1% relative bias
// on the top token would be detected with power >= 0.99 at p = 1e-4 (the test
// prints the noncentrality and the power and asserts the latter).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "runtime/device_memory.hpp"
#include "tests/support/chi_squared.hpp"
#include "tests/support/device_buffers.hpp"
#include "tests/support/gpu_test_support.hpp"
#include "tests/support/host_logits.hpp"
#include "tests/support/sampler_configs.hpp"

namespace fusedsample {
namespace {

using runtime::DeviceMemory;
using testing::from_device;
using testing::to_device;

constexpr std::int64_t kHidden = 64;
constexpr int kSamplesPerRow = 16;
constexpr std::size_t kWinnersPerCall = std::size_t(80) << 20;  // (row, sample, vocabulary tile) triples per call
constexpr std::size_t kLiveTokens = 256;
constexpr double kDeadLogit = -40.0;  // in units of the temperature

void check_distribution(std::int64_t V, float tau, std::int64_t target_samples) {
  const DType dtype = DType::bf16;
  const std::int64_t d = kHidden;
  std::mt19937_64 rng(testing::fresh_seed());

  // Live tokens: everything for small V; otherwise 256 spread over the
  // vocabulary, including the first and last token and both sides of the
  // tile boundaries at 128 and 256.
  std::vector<std::int64_t> live;
  if (std::size_t(V) <= kLiveTokens) {
    for (std::int64_t v = 0; v < V; ++v) live.push_back(v);
  } else {
    std::set<std::int64_t> chosen{0, V - 1, 127, 128, 255, 256, V / 2};
    std::uniform_int_distribution<std::int64_t> pick(0, V - 1);
    while (chosen.size() < kLiveTokens) chosen.insert(pick(rng));
    live.assign(chosen.begin(), chosen.end());
  }
  std::shuffle(live.begin(), live.end(), rng);  // live[0..3] are the top four

  std::vector<double> target(std::size_t(V), kDeadLogit);
  const double top_p[] = {0.4, 0.2, 0.1, 0.05};
  std::uniform_real_distribution<double> jitter(-1.0, 1.0);
  const double rest_each = std::log(0.25 / double(live.size() - 4));
  for (std::size_t i = 0; i < live.size(); ++i)
    target[std::size_t(live[i])] = i < 4 ? std::log(top_p[i]) : rest_each + jitter(rng);

  std::vector<std::uint8_t> w(std::size_t(V * d) * 2), h(std::size_t(d) * 2);
  auto put = [](std::vector<std::uint8_t>& s, std::size_t i, float f) {
    const std::uint16_t b = float_to_bf16(f);
    std::memcpy(&s[i * 2], &b, 2);
  };
  std::normal_distribution<float> unit(0.0f, 1.0f), small(0.0f, 0.01f);
  for (std::int64_t v = 0; v < V; ++v) {
    // The top token's logit has no random part, so its probability stays
    // near 0.4 (which the power of the test depends on).
    const bool top = v == live[0];
    put(w, std::size_t(v * d), float(double(tau) * target[std::size_t(v)]));
    for (std::int64_t k = 1; k < d; ++k) put(w, std::size_t(v * d + k), top ? 0.0f : unit(rng));
  }
  put(h, 0, 1.0f);
  for (std::int64_t k = 1; k < d; ++k) put(h, std::size_t(k), small(rng));

  // Exact probabilities: logits in double from the stored values, scaled by
  // the kernel's fp32 1/temperature.
  const std::vector<double> logits = testing::host_logits(w, h, dtype, V, d, 1);
  const double inv_tau = double(1.0f / tau);
  double zmax = -INFINITY;
  for (double l : logits) zmax = std::max(zmax, l * inv_tau);
  std::vector<double> p(static_cast<std::size_t>(V));
  double sum = 0;
  for (std::size_t v = 0; v < p.size(); ++v) sum += (p[v] = std::exp(logits[v] * inv_tau - zmax));
  for (double& x : p) x /= sum;

  Sampler sampler(testing::sampler_options(V, d, dtype));
  const int S = kSamplesPerRow;
  const std::int64_t vtiles = (V + sampler.spec_for(1 << 20).tile_v - 1) / sampler.spec_for(1 << 20).tile_v;
  const std::int64_t budget_rows = std::int64_t(kWinnersPerCall / (std::size_t(S) * std::size_t(vtiles)));
  const std::int64_t calls = (target_samples + budget_rows * S - 1) / (budget_rows * S);
  const std::int64_t rows = (target_samples + calls * S - 1) / (calls * S);

  std::vector<std::uint8_t> hrows(std::size_t(rows * d) * 2);
  for (std::int64_t n = 0; n < rows; ++n) std::memcpy(&hrows[std::size_t(n * d) * 2], h.data(), std::size_t(d) * 2);
  const DeviceMemory dw = to_device(w), dh = to_device(hrows);
  DeviceMemory dseeds(std::size_t(rows) * 8), dout(std::size_t(rows * S) * 8);
  std::vector<std::uint64_t> seeds(static_cast<std::size_t>(rows));
  std::vector<std::uint64_t> counts(std::size_t(V), 0);
  std::uint64_t out_of_range = 0;
  const std::uint64_t offset_base = rng();

  const auto t0 = std::chrono::steady_clock::now();
  for (std::int64_t c = 0; c < calls; ++c) {
    for (auto& s : seeds) s = rng();
    dseeds.upload(seeds.data(), seeds.size() * 8);
    testing::poison(dout);
    SampleArgs a;
    a.weights = dw.as<const void>();
    a.hidden_states = dh.as<const void>();
    a.rows = rows;
    a.num_samples = S;
    a.temperature = tau;
    a.seeds = dseeds.as<const std::uint64_t>();
    a.offset = offset_base + std::uint64_t(c) * 0x9E3779B97F4A7C15ull;
    a.out = dout.as<void>();
    sampler.sample(a, nullptr);
    const auto got = from_device<std::int64_t>(dout, std::size_t(rows * S));
    for (std::int64_t x : got) {
      if (x < 0 || x >= V) ++out_of_range;
      else ++counts[std::size_t(x)];
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::int64_t M = calls * rows * S;

  const testing::Chi2Result r = testing::chi2_goodness_of_fit(counts, p);
  std::printf("[ dist     ] V=%lld tau=%g: %lld samples (%lld calls x %lld rows x %d) in %.2f s\n",
              static_cast<long long>(V), double(tau), static_cast<long long>(M), static_cast<long long>(calls),
              static_cast<long long>(rows), S, secs);
  for (int i = 0; i < 4; ++i) {
    const std::size_t v = std::size_t(live[std::size_t(i)]);
    const double e = double(M) * p[v];
    std::printf("[ dist     ]   token %7zu: p=%.5f observed %.5f (z=%+.2f)\n", v, p[v], double(counts[v]) / double(M),
                (double(counts[v]) - e) / std::sqrt(e * (1 - p[v])));
  }
  std::printf("[ dist     ]   chi2=%.1f dof=%d critical(p=1e-4, Wilson-Hilferty)=%.1f; a 1%% top-token bias gives "
              "noncentrality %.1f, power %.4f\n",
              r.statistic, r.dof, r.critical, r.lambda_top_bias, r.power);

  EXPECT_EQ(out_of_range, 0u) << "indices outside [0, V)";
  EXPECT_EQ(r.impossible_hits, 0u) << "tokens with probability < 1e-12 were sampled";
  ASSERT_GE(r.dof, 1);
  EXPECT_GE(r.power, 0.99) << "too few samples to detect a 1% bias on the top token";
  EXPECT_LT(r.statistic, r.critical) << "the samples do not follow softmax(logits / temperature)";
}

TEST(SamplerDistributionGpu, Vocab100) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  check_distribution(100, 1.0f, 4'000'000);
}

TEST(SamplerDistributionGpu, Vocab4096) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  check_distribution(4096, 0.75f, 4'000'000);
}

TEST(SamplerDistributionGpu, Vocab151936) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  check_distribution(151936, 1.5f, 4'000'000);
}

}  // namespace
}  // namespace fusedsample
