// sampler_resident_h_gpu_test.cpp: mma_sync with H resident in shared memory
// (spec token hrD, templates/fused_mma.cuh): the samples are the CPU
// reference's for shapes that give each block many tiles (the resident H is
// loaded during the first tile only), a depth that is not a multiple of T_d
// (the last slice is zero-filled), a vocabulary and batch that are not
// multiples of the tiles, and several samples per row; and the Sampler
// refuses a batch larger than T_N or a depth larger than the resident buffer
// with InvalidArgument, before anything is launched.
//
// Random inputs: a fresh seed per test, printed; replay with FUSEDSAMPLE_TEST_SEED=<seed>.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "runtime/device_memory.hpp"
#include "tests/support/gpu_test_support.hpp"
#include "tests/support/sampler_test_helpers.hpp"

namespace fusedsample {
namespace {

using runtime::DeviceMemory;
using testing::from_device;
using testing::to_device;

KernelSpec resident(DType dtype, int tile_v, int tile_n, int tile_d, int stages, int warps_m, int warps_n,
                    int resident_d) {
  KernelSpec s = testing::make_spec(dtype, tile_v, tile_n, tile_d, stages, warps_m, warps_n);
  s.resident_d = resident_d;
  return s;
}

struct Case {
  std::int64_t V, d, N;
  int S;
};

TEST(ResidentHGpu, MatchesReference) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
  // (spec, cases): d <= resident_d and N <= T_N in every case.
  const std::vector<std::pair<KernelSpec, std::vector<Case>>> plan = {
      {resident(DType::bf16, 64, 16, 128, 3, 4, 1, 1024),
       {{70001, 520, 16, 1}, {4099, 1024, 9, 3}, {7, 64, 16, 2}, {32013, 256, 1, 3}}},
      {resident(DType::fp16, 128, 8, 64, 4, 8, 1, 640), {{70001, 640, 8, 2}, {1000, 136, 3, 3}}},
      {resident(DType::bf16, 128, 32, 64, 3, 2, 2, 512), {{32013, 512, 32, 1}, {4099, 200, 17, 2}}},
  };
  for (const auto& [spec, cases] : plan) {
    for (const Case& c : cases) {
      const std::string what =
          fmt::format("[{}] V={} d={} N={} S={}", spec.to_string(), c.V, c.d, c.N, c.S);
      SCOPED_TRACE(what);
      Sampler sampler(testing::sampler_options(c.V, c.d, spec.dtype, spec));
      const auto w = testing::random_storage(spec.dtype, std::size_t(c.V * c.d), 1.0, rng);
      const auto h = testing::random_storage(spec.dtype, std::size_t(c.N * c.d), 2.0 / std::sqrt(double(c.d)), rng);
      const DeviceMemory dw = to_device(w), dh = to_device(h);
      std::vector<float> temps;
      std::vector<std::uint64_t> seeds, offsets;
      for (std::int64_t n = 0; n < c.N; ++n) {
        temps.push_back(n % 5 == 3 ? 0.0f : 0.5f + 0.25f * float(n % 4));  // every fifth row greedy
        seeds.push_back(rng());
        offsets.push_back(rng());
      }
      const DeviceMemory dt = to_device(temps), ds = to_device(seeds), doff = to_device(offsets);
      DeviceMemory out(std::size_t(c.N * c.S) * 8);
      testing::poison(out);
      SampleArgs a;
      a.weights = dw.as<const void>();
      a.hidden_states = dh.as<const void>();
      a.rows = c.N;
      a.num_samples = c.S;
      a.temperatures = dt.as<const float>();
      a.seeds = ds.as<const std::uint64_t>();
      a.offsets = doff.as<const std::uint64_t>();
      a.out = out.as<void>();
      sampler.sample(a, nullptr);
      const auto got = from_device<std::int64_t>(out, std::size_t(c.N * c.S));
      std::vector<ReferenceRowParams> rows;
      for (std::int64_t n = 0; n < c.N; ++n) rows.push_back({temps[n], seeds[n], offsets[n]});
      const auto ref = reference_sample(w.data(), h.data(), spec.dtype, c.V, c.d, c.N, rows, c.S);
      const testing::Comparison cmp = testing::compare_with_reference(got, ref, c.V, c.S, what);
      std::printf("[ case     ] %-70s pairs %4lld  near-ties %lld  mismatches %lld\n", what.c_str(),
                  static_cast<long long>(cmp.pairs), static_cast<long long>(cmp.close),
                  static_cast<long long>(cmp.mismatches));
    }
  }
}

TEST(ResidentHGpu, RefusesMoreRowsThanTheTileOrADeeperH) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  const KernelSpec spec = resident(DType::bf16, 64, 16, 128, 3, 4, 1, 1024);
  std::mt19937_64 rng(testing::fresh_seed());
  for (const auto& [d, N] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1024, 17}, {1032, 4}}) {
    SCOPED_TRACE(fmt::format("d={} N={}", d, N));
    Sampler sampler(testing::sampler_options(4099, d, DType::bf16, spec));
    const DeviceMemory dw = to_device(testing::random_storage(DType::bf16, std::size_t(4099 * d), 1.0, rng));
    const DeviceMemory dh = to_device(testing::random_storage(DType::bf16, std::size_t(N * d), 0.1, rng));
    DeviceMemory out(std::size_t(N) * 8);
    testing::poison(out);
    SampleArgs a;
    a.weights = dw.as<const void>();
    a.hidden_states = dh.as<const void>();
    a.rows = N;
    a.out = out.as<void>();
    try {
      sampler.sample(a, nullptr);
      ADD_FAILURE() << "no InvalidArgument";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("resident"), std::string::npos) << e.what();
    }
    const auto got = from_device<std::int64_t>(out, std::size_t(N));
    for (std::int64_t v : got) EXPECT_EQ(v, testing::kPoison64) << "the output was written";
  }
}

}  // namespace
}  // namespace fusedsample
