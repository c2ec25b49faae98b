// sampler_exactness_paths_gpu_test.cpp: the fused sampler matches the CPU
// reference on the kernels' special paths: the epilogue's skip rule (wide
// logits), greedy rows of negative logits with tiles past the vocabulary,
// and stream-K's cut tiles.
//
// Inputs are random (a fresh seed per test, printed; replay a failure with
// FUSEDSAMPLE_TEST_SEED=<seed>). W ~ N(0, 1), H ~ N(0, (2/sqrt(d))^2), so the
// logits have a standard deviation of about 2.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/parallel_compile.hpp"
#include "fusedsample/fusedsample.hpp"
#include "fusedsample/tuning_db.hpp"
#include "runtime/device_memory.hpp"
#include "templates/stream_k.cuh"
#include "tests/support/device_buffers.hpp"
#include "tests/support/exactness_inputs.hpp"
#include "tests/support/gpu_test_support.hpp"
#include "tests/support/reference_comparison.hpp"
#include "tests/support/sampler_configs.hpp"

namespace fusedsample {
namespace {

using runtime::DeviceMemory;
using testing::to_device;
using namespace testing::exactness_tests;

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

// The specs the tables pick for several samples per row (the sample buckets
// 4 and 16 of session 37) at every shape the built-in tables have such
// entries for (the record shapes since session 37, five model shapes since
// session 38), every batch bucket and both 16-bit dtypes:
// Sampler::spec_for(rows, S) is the lookup's answer, and each spec, forced on
// a small head, draws the reference's tokens.
TEST(ExactnessTunedSamples, SampleBucketSpecsMatchReference) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  const auto [dev, id, arch] = testing::test_device();
  std::set<std::pair<std::int64_t, std::int64_t>> shapes;
  for (const auto& e : builtin_tuning_db().entries())
    if (e.key.samples_bucket > 0) shapes.emplace(e.key.vocab, e.key.d_model);
  ASSERT_GE(shapes.size(), 7u) << "the built-in tables lost their several-samples entries";
  std::set<std::string> picked;
  for (DType dtype : {DType::bf16, DType::fp16})
    for (const auto& [V, d] : shapes) {
      Sampler table(testing::sampler_options(V, d, dtype));
      for (int b = 0; b < kNumBatchBuckets; ++b)
        for (int S : {4, 16}) {
          const KernelSpec k = table.spec_for(bucket_rows(b), S);
          KernelSpec want = tuned_spec(id, dtype, V, d, bucket_rows(b), arch, S).spec;
          if (!testing::spec_runs_here(want)) continue;  // the Sampler's portable fallback
          want.arch = k.arch;
          EXPECT_EQ(k, want) << k.to_string() << " for N=" << bucket_rows(b) << " S=" << S;
          picked.insert(k.to_string());
        }
    }
  if (picked.empty()) GTEST_SKIP() << "no table spec for several samples runs on " << dev.name;
  std::vector<KernelSpec> specs;
  for (const std::string& t : picked) specs.push_back(KernelSpec::parse(t));
  for (const auto& c : compile_all(specs)) ASSERT_TRUE(c.ok) << c.spec.to_string() << ": " << c.error;

  std::mt19937_64 rng(testing::fresh_seed());
  const std::int64_t V = 4099, d = 256, N = 40;
  const int S = 5;
  for (DType dtype : {DType::bf16, DType::fp16}) {
    const RandomInputs in(dtype, V, d, N, 2.0 / std::sqrt(double(d)), rng);
    const RowParams rows(N, 1, rng);
    const auto ref = reference_sample(in.w.data(), in.h.data(), dtype, V, d, N, rows.reference(), S);
    for (const KernelSpec& spec : specs) {
      if (spec.dtype != dtype) continue;
      const std::string what = config_name(spec);
      SCOPED_TRACE(what);
      Sampler sampler(testing::sampler_options(V, d, dtype, spec));
      const auto got = sample_int64(sampler, in.dw, in.dh, N, S, rows);
      const testing::Comparison cmp = testing::compare_with_reference(got, ref, V, S, what);
      EXPECT_EQ(cmp.mismatches, 0) << what;
      std::printf("[ case     ] %s: pairs %lld near-ties %lld\n", what.c_str(), static_cast<long long>(cmp.pairs),
                  static_cast<long long>(cmp.close));
    }
  }
  std::printf("[ summary  ] %zu distinct table specs for S = 4 and 16 checked\n", specs.size());
}

}  // namespace
}  // namespace fusedsample
