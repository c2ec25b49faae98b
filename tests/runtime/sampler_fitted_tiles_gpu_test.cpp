// sampler_fitted_tiles_gpu_test.cpp: the Sampler fits a register-epilogue
// table winner's batch tile to the batch (fit_batch_tile, sessions 65-66): a
// batch of 65..256 rows (or a part of a larger batch) runs tile_n = its rows
// rounded up to 8, not the bucket's 128, 160, 192, 224 or 256; where the bucket's
// winner has several batch tiles, a batch nearer the bucket below runs that
// bucket's one re tile grown to it (grow_batch_tile).
// Each fitted or grown spec the tables give on this GPU, forced on a small
// head, draws the CPU reference's tokens.
//
// Inputs are random (a fresh seed per test, printed; replay a failure with
// FUSEDSAMPLE_TEST_SEED=<seed>).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "compiler/parallel_compile.hpp"
#include "fusedsample/fusedsample.hpp"
#include "fusedsample/tuning_db.hpp"
#include "runtime/batch_tiles.hpp"
#include "runtime/device_memory.hpp"
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

// Sampler::spec_for(N) is the table's answer for N's bucket fitted to N's
// part (batch_part_rows), or the bucket below's grown to it, for every N of
// the record shapes from 65 to 520;
// on a GPU with register-epilogue entries (H100, H200) some are fitted, and
// each distinct fitted spec samples the reference's tokens at N = T_N - 5
// (one batch tile, its last rows past N) and N = 2 T_N - 3 (two tiles).
TEST(ExactnessFittedTiles, TableSpecsFittedToTheBatchMatchReference) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  const auto [dev, id, arch] = testing::test_device();
  const DType dtype = DType::bf16;
  std::set<std::string> fitted;
  for (const auto& [V, d] : {std::pair<std::int64_t, std::int64_t>{151936, 4096}, {128256, 8192}}) {
    Sampler table(testing::sampler_options(V, d, dtype));
    for (std::int64_t n = 65; n <= 520; ++n) {
      const std::int64_t part = batch_part_rows(n);
      const int b = batch_bucket(n);
      const KernelSpec bucket = tuned_spec(id, dtype, V, d, bucket_rows(b), arch, 1).spec;
      if (!testing::spec_runs_here(bucket)) continue;  // the Sampler's portable fallback
      // The rule (runtime::batch_spec, tested on the CPU in batch_tiles_test.cpp) on this GPU's table.
      KernelSpec want = runtime::batch_spec(
          part, [&](std::int64_t rows) { return tuned_spec(id, dtype, V, d, rows, arch, 1).spec; },
          std::size_t(dev.max_shared_per_block_optin));
      const KernelSpec k = table.spec_for(n);
      want.arch = k.arch;
      ASSERT_EQ(k, want) << k.to_string() << " for N=" << n << " (part " << part << ")";
      if (k.reg_epilogue && part > 64 && k.tile_n >= part && bucket.tile_n == bucket_rows(b))
        EXPECT_EQ(k.tile_n, std::max<std::int64_t>(64, (part + 7) / 8 * 8)) << k.to_string() << " for N=" << n;
      KernelSpec as_tuned = bucket;
      as_tuned.arch = k.arch;
      if (k != as_tuned) fitted.insert(k.to_string());  // fitted or grown
    }
  }
  if (fitted.empty()) GTEST_SKIP() << "no register-epilogue table entry to fit on " << dev.name;
  std::vector<KernelSpec> specs;
  for (const std::string& t : fitted) specs.push_back(KernelSpec::parse(t));
  for (const auto& c : compile_all(specs)) ASSERT_TRUE(c.ok) << c.spec.to_string() << ": " << c.error;

  std::mt19937_64 rng(testing::fresh_seed());
  const std::int64_t V = 4099, d = 256, Nmax = 2 * 256;
  const std::vector<std::uint8_t> w = testing::random_storage(dtype, std::size_t(V * d), 1.0, rng);
  const std::vector<std::uint8_t> h = testing::random_storage(dtype, std::size_t(Nmax * d), 2.0 / std::sqrt(double(d)), rng);
  const DeviceMemory dw = to_device(w), dh = to_device(h);
  const int S = 2;
  // One reference for Nmax rows: a batch of N rows takes the first N (each row's noise is its own).
  const RowParams rows(Nmax, 2, rng);
  const auto ref = reference_sample(w.data(), h.data(), dtype, V, d, Nmax, rows.reference(), S);
  for (const KernelSpec& spec : specs) {
    Sampler sampler(testing::sampler_options(V, d, dtype, spec));
    for (std::int64_t N : {std::int64_t(spec.tile_n) - 5, 2 * std::int64_t(spec.tile_n) - 3}) {
      const std::string what = config_name(spec) + " N=" + std::to_string(N);
      SCOPED_TRACE(what);
      const auto got = sample_int64(sampler, dw, dh, N, S, rows);
      const std::vector<ReferenceResult> want(ref.begin(), ref.begin() + N * S);
      const testing::Comparison cmp = testing::compare_with_reference(got, want, V, S, what);
      EXPECT_EQ(cmp.mismatches, 0) << what;
    }
  }
  std::printf("[ summary  ] %zu distinct fitted table specs checked\n", specs.size());
}

}  // namespace
}  // namespace fusedsample
