// sampler_api_parameters_gpu_test.cpp: the host API's sampling parameters on
// a GPU: scalar vs per-row temperatures, seeds and offsets, what changes the
// samples (seed, offset, sample index) and what does not (a second call or
// Sampler, other calls queued before it).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_memory.hpp"
#include "tests/support/device_buffers.hpp"
#include "tests/support/gpu_test_support.hpp"
#include "tests/support/sampler_api_problem.hpp"
#include "tests/support/sampler_configs.hpp"

namespace fusedsample {
namespace {

using namespace testing::sampler_api_tests;

// Scalars and per-row device arrays holding the same values give the same
// samples, in every combination.
TEST_F(SamplerApiGpu, ScalarAndPerRowParametersAgree) {
  const Problem pb(DType::bf16, rng);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  const int S = 2;
  const std::size_t n = std::size_t(pb.N * S);
  const float tau = 1.25f;
  const std::uint64_t seed = rng(), offset = rng();
  const DeviceMemory dtemps = to_device(std::vector<float>(std::size_t(pb.N), tau));
  const DeviceMemory dseeds = to_device(std::vector<std::uint64_t>(std::size_t(pb.N), seed));
  const DeviceMemory doffsets = to_device(std::vector<std::uint64_t>(std::size_t(pb.N), offset));

  auto sample_with = [&](bool temps, bool seeds, bool offsets) {
    return run64(n, [&](const DeviceMemory& out) {
      SampleArgs a = pb.args(out, S);
      a.temperature = temps ? 7.0f : tau;  // the scalar is ignored when the array is given
      a.seed = seeds ? seed + 1 : seed;
      a.offset = offsets ? offset + 1 : offset;
      if (temps) a.temperatures = dtemps.as<const float>();
      if (seeds) a.seeds = dseeds.as<const std::uint64_t>();
      if (offsets) a.offsets = doffsets.as<const std::uint64_t>();
      sampler.sample(a, nullptr);
    });
  };
  const auto scalars = sample_with(false, false, false);
  expect_all_in_range(scalars, pb.V, "scalars");
  for (int mask = 1; mask < 8; ++mask) {
    const bool t = mask & 1, s = mask & 2, o = mask & 4;
    EXPECT_EQ(sample_with(t, s, o), scalars) << "per-row temperatures=" << t << " seeds=" << s << " offsets=" << o;
  }
}

// The offset, the seed and the sample index each change the samples; a
// per-row offset or seed changes only its own row.
TEST_F(SamplerApiGpu, SeedOffsetAndSampleIndexChangeSamples) {
  const Problem pb(DType::bf16, rng, 5003, 136, 64);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  const int S = 4;
  const std::size_t n = std::size_t(pb.N * S);
  const std::uint64_t seed = rng(), offset = rng();
  // Temperature 2 on logits of std ~2: broad distributions, so two
  // independent draws rarely coincide.
  auto sample_with = [&](std::uint64_t sd, std::uint64_t off, const DeviceMemory* seeds, const DeviceMemory* offsets) {
    return run64(n, [&](const DeviceMemory& out) {
      SampleArgs a = pb.args(out, S);
      a.temperature = 2.0f;
      a.seed = sd;
      a.offset = off;
      if (seeds) a.seeds = seeds->as<const std::uint64_t>();
      if (offsets) a.offsets = offsets->as<const std::uint64_t>();
      sampler.sample(a, nullptr);
    });
  };
  const auto base = sample_with(seed, offset, nullptr, nullptr);
  expect_all_in_range(base, pb.V, "base");
  const auto next_offset = sample_with(seed, offset + 1, nullptr, nullptr);
  const auto next_seed = sample_with(seed + 1, offset, nullptr, nullptr);
  const auto high_offset = sample_with(seed, offset ^ (std::uint64_t(1) << 40), nullptr, nullptr);
  const auto high_seed = sample_with(seed ^ (std::uint64_t(1) << 40), offset, nullptr, nullptr);
  EXPECT_GT(count_differences(base, next_offset), n / 2) << "offset + 1 barely changes the samples";
  EXPECT_GT(count_differences(base, next_seed), n / 2) << "seed + 1 barely changes the samples";
  EXPECT_GT(count_differences(base, high_offset), n / 2) << "the offset's high 32 bits are ignored";
  EXPECT_GT(count_differences(base, high_seed), n / 2) << "the seed's high 32 bits are ignored";

  std::size_t same_as_sample0 = 0;
  for (std::int64_t r = 0; r < pb.N; ++r)
    for (int s = 1; s < S; ++s) same_as_sample0 += base[std::size_t(r * S + s)] == base[std::size_t(r * S)];
  EXPECT_LT(same_as_sample0, std::size_t(pb.N * (S - 1)) / 2) << "the samples of a row are not independent";

  // Per-row arrays: row 5 alone gets another offset (then another seed).
  const std::int64_t row = 5;
  std::vector<std::uint64_t> offsets(std::size_t(pb.N), offset), seeds(std::size_t(pb.N), seed);
  offsets[row] += 1;
  seeds[row] += 1;
  const DeviceMemory doffsets = to_device(offsets), dseeds = to_device(seeds);
  for (const bool by_seed : {false, true}) {
    SCOPED_TRACE(by_seed ? "per-row seed" : "per-row offset");
    const auto got = by_seed ? sample_with(seed, offset, &dseeds, nullptr) : sample_with(seed, offset, nullptr, &doffsets);
    std::size_t other_rows_changed = 0, row_changed = 0;
    for (std::int64_t r = 0; r < pb.N; ++r)
      for (int s = 0; s < S; ++s) {
        const std::size_t i = std::size_t(r * S + s);
        (r == row ? row_changed : other_rows_changed) += got[i] != base[i];
      }
    EXPECT_EQ(other_rows_changed, 0u) << "changing one row's parameter changed other rows";
    EXPECT_GT(row_changed, 0u) << "changing row " << row << "'s parameter did not change its samples";
  }
}

// The same call gives the same samples: twice on one Sampler, and on a second
// Sampler for the same head.
TEST_F(SamplerApiGpu, DeterministicAcrossCallsAndSamplers) {
  for (DType dtype : {DType::bf16, DType::fp32}) {
    SCOPED_TRACE(std::string(to_string(dtype)));
    const Problem pb(dtype, rng);
    const int S = 3;
    const std::size_t n = std::size_t(pb.N * S);
    const std::uint64_t seed = rng(), offset = rng();
    auto call = [&](Sampler& s) {
      return run64(n, [&](const DeviceMemory& out) {
        SampleArgs a = pb.args(out, S);
        a.seed = seed;
        a.offset = offset;
        s.sample(a, nullptr);
      });
    };
    Sampler first(testing::sampler_options(pb.V, pb.d, dtype));
    const auto a = call(first);
    expect_all_in_range(a, pb.V, "first call");
    EXPECT_EQ(call(first), a) << "second call on the same Sampler";
    Sampler second(testing::sampler_options(pb.V, pb.d, dtype));
    EXPECT_EQ(call(second), a) << "another Sampler";
  }
}

// Each launch leaves the workspace clean for the next one (its last block
// zeroes the running winners and the block counter): calls of different shapes
// queued back to back with no host sync in between give what each gives alone.
TEST_F(SamplerApiGpu, BackToBackCallsOfDifferentShapesAreIndependent) {
  const Problem pb(DType::bf16, rng);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  struct Call {
    std::int64_t rows;
    int S;
    std::uint64_t seed;
  };
  const std::vector<Call> calls = {{pb.N, 3, rng()}, {5, 1, rng()}, {1, 4, rng()}, {pb.N, 2, rng()}, {5, 1, rng()}};
  auto args = [&](const Call& c, const DeviceMemory& out) {
    SampleArgs a = pb.args(out, c.S);
    a.rows = c.rows;
    a.seed = c.seed;
    return a;
  };
  std::vector<DeviceMemory> outs;
  for (const Call& c : calls) {
    outs.emplace_back(std::size_t(c.rows * c.S) * 8);
    testing::poison(outs.back());
  }
  FS_CU(cuCtxSynchronize());
  for (std::size_t i = 0; i < calls.size(); ++i) sampler.sample(args(calls[i], outs[i]), nullptr);  // no sync between
  for (std::size_t i = 0; i < calls.size(); ++i) {
    SCOPED_TRACE("call " + std::to_string(i));
    const std::size_t n = std::size_t(calls[i].rows * calls[i].S);
    const auto queued = from_device<std::int64_t>(outs[i], n);
    expect_all_in_range(queued, pb.V, "queued call");
    const auto alone = run64(n, [&](const DeviceMemory& out) {
      sampler.sample(args(calls[i], out), nullptr);
      FS_CU(cuCtxSynchronize());
    });
    EXPECT_EQ(queued, alone) << "a call queued behind others differs from the same call alone";
  }
}

}  // namespace
}  // namespace fusedsample
