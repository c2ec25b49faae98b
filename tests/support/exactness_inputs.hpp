// exactness_inputs.hpp: what the Sampler exactness GPU tests
// (tests/runtime/sampler_exactness*_gpu_test.cpp, sampler_dtype_gpu_test.cpp)
// share: shapes, per-row parameters on the host and the device, a config's
// name, and calls (sample, sample_logits) into a poisoned int64 buffer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "runtime/device_memory.hpp"
#include "tests/support/device_buffers.hpp"
#include "tests/support/sampler_configs.hpp"

namespace fusedsample::testing::exactness_tests {

using runtime::DeviceMemory;

struct Shape {
  std::int64_t V, d, N;
  int S;
};

inline constexpr float kTemperatureCycle[] = {0.5f, 1.0f, 2.0f, 0.0f, 0.7f};

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

inline std::string config_name(const std::optional<KernelSpec>& spec) {
  return spec ? testing::tiles_name(*spec) : std::string("default");
}

// Runs `sampler.sample` into a poisoned int64 buffer and returns the [N*S] result.
inline std::vector<std::int64_t> sample_int64(Sampler& sampler, const DeviceMemory& dw, const DeviceMemory& dh,
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

// The same with `sampler.sample_logits` over fp32 logits [N, V] at `logits`.
inline std::vector<std::int64_t> sample_logits_int64(Sampler& sampler, const float* logits, std::int64_t N, int S,
                                                     const RowParams& rows) {
  DeviceMemory out(std::size_t(N * S) * 8);
  testing::poison(out);
  SampleArgs a;
  a.rows = N;
  a.num_samples = S;
  rows.fill(a);
  a.out = out.as<void>();
  sampler.sample_logits(logits, a, nullptr);
  return from_device<std::int64_t>(out, std::size_t(N * S));
}

}  // namespace fusedsample::testing::exactness_tests
