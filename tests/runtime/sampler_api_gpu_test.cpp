// sampler_api_gpu_test.cpp: the host API's contract on a GPU: int32 and int64
// outputs, scalar vs per-row parameters, what changes the samples and what
// does not, every output element written (and nothing past the end), invalid
// per-row temperatures, and CUDA graph capture (after reserve(); growing the
// workspace during capture is refused with a message that names reserve()).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_memory.hpp"
#include "tests/support/gpu_test_support.hpp"
#include "tests/support/sampler_test_helpers.hpp"

namespace fusedsample {
namespace {

using runtime::DeviceMemory;
using testing::from_device;
using testing::to_device;

// Random W [V, d] and H [N, d] on host and device. V = 5003 is not a multiple
// of any T_V, d = 136 not a multiple of 16, N = 37 not a multiple of T_N.
struct Problem {
  DType dtype;
  std::int64_t V, d, N;
  std::vector<std::uint8_t> w, h;
  DeviceMemory dw, dh;

  Problem(DType dt, std::mt19937_64& rng, std::int64_t v = 5003, std::int64_t dd = 136, std::int64_t n = 37)
      : dtype(dt), V(v), d(dd), N(n) {
    w = testing::random_storage(dtype, std::size_t(V * d), 1.0, rng);
    h = testing::random_storage(dtype, std::size_t(N * d), 2.0 / std::sqrt(double(d)), rng);
    dw = to_device(w);
    dh = to_device(h);
  }
  SampleArgs args(const DeviceMemory& out, int S, IndexType type = IndexType::int64) const {
    SampleArgs a;
    a.weights = dw.as<const void>();
    a.hidden_states = dh.as<const void>();
    a.rows = N;
    a.num_samples = S;
    a.out = out.as<void>();
    a.index_type = type;
    return a;
  }
};

// Runs `call` into a fresh poisoned int64 buffer of n elements and returns it.
template <typename F>
std::vector<std::int64_t> run64(std::size_t n, F&& call) {
  DeviceMemory out(n * 8);
  testing::poison(out);
  call(out);
  return from_device<std::int64_t>(out, n);
}

std::size_t count_differences(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
  return n;
}

void expect_all_in_range(const std::vector<std::int64_t>& got, std::int64_t V, const std::string& what) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] < 0 || got[i] >= V) {
      if (++bad <= 5) ADD_FAILURE() << what << ": element " << i << " = " << got[i] << " (V=" << V << ")";
    }
  EXPECT_EQ(bad, 0u) << what;
}

// ---------------------------------------------------------------------------

TEST(SamplerApiGpu, Int32OutputMatchesInt64) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
  for (DType dtype : {DType::bf16, DType::fp16, DType::fp32}) {
    SCOPED_TRACE(std::string(to_string(dtype)));
    const Problem pb(dtype, rng);
    Sampler sampler(testing::sampler_options(pb.V, pb.d, dtype));
    const int S = 3;
    const std::size_t n = std::size_t(pb.N * S);
    const std::uint64_t seed = rng(), offset = rng();

    DeviceMemory out64(n * 8), out32(n * 4);
    testing::poison(out64);
    testing::poison(out32);
    SampleArgs a = pb.args(out64, S);
    a.seed = seed;
    a.offset = offset;
    a.temperature = 0.9f;
    sampler.sample(a, nullptr);
    a.out = out32.as<void>();
    a.index_type = IndexType::int32;
    sampler.sample(a, nullptr);
    const auto got64 = from_device<std::int64_t>(out64, n);
    const auto got32 = from_device<std::int32_t>(out32, n);
    expect_all_in_range(got64, pb.V, "int64");
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(std::int64_t(got32[i]), got64[i]) << "element " << i;
  }
}

// Scalars and per-row device arrays holding the same values give the same
// samples, in every combination.
TEST(SamplerApiGpu, ScalarAndPerRowParametersAgree) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
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
TEST(SamplerApiGpu, SeedOffsetAndSampleIndexChangeSamples) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
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
TEST(SamplerApiGpu, DeterministicAcrossCallsAndSamplers) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
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
TEST(SamplerApiGpu, BackToBackCallsOfDifferentShapesAreIndependent) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
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

// Every output element is written, nothing after the last one is: the output
// buffer and a guard region after it are poisoned with 0xAB bytes first. For
// int64 and int32 outputs, the fused path and sample_logits.
TEST(SamplerApiGpu, PoisonedOutputIsFullyWritten) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
  const Problem pb(DType::bf16, rng);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  std::normal_distribution<float> logit(0.0f, 2.0f);
  std::vector<float> logits(std::size_t(pb.N * pb.V));
  for (float& x : logits) x = logit(rng);
  const DeviceMemory dlogits = to_device(logits);
  const int S = 3;
  const std::size_t n = std::size_t(pb.N * S), guard = 64;

  for (const IndexType type : {IndexType::int64, IndexType::int32})
    for (const bool unfused : {false, true}) {
      const std::string what = std::string(type == IndexType::int64 ? "int64" : "int32") +
                               (unfused ? " sample_logits" : " sample");
      SCOPED_TRACE(what);
      const std::size_t elem = type == IndexType::int64 ? 8 : 4;
      DeviceMemory out((n + guard) * elem);
      testing::poison(out);
      SampleArgs a = pb.args(out, S, type);
      a.seed = rng();
      a.offset = rng();
      a.temperature = 1.0f;
      if (unfused) sampler.sample_logits(dlogits.as<const float>(), a, nullptr);
      else sampler.sample(a, nullptr);
      const auto bytes = from_device<std::uint8_t>(out, (n + guard) * elem);
      std::size_t unwritten = 0, bad = 0, guard_written = 0;
      for (std::size_t i = 0; i < n; ++i) {
        std::int64_t v;
        if (type == IndexType::int64) {
          std::memcpy(&v, &bytes[i * 8], 8);
          unwritten += v == testing::kPoison64;
        } else {
          std::int32_t v32;
          std::memcpy(&v32, &bytes[i * 4], 4);
          unwritten += v32 == testing::kPoison32;
          v = v32;
        }
        if (v < 0 || v >= pb.V) {
          if (++bad <= 5) ADD_FAILURE() << what << ": element " << i << " = " << v;
        }
      }
      for (std::size_t b = n * elem; b < bytes.size(); ++b) guard_written += bytes[b] != testing::kPoisonByte;
      EXPECT_EQ(unwritten, 0u) << "elements left unwritten";
      EXPECT_EQ(bad, 0u) << "elements outside [0, V)";
      EXPECT_EQ(guard_written, 0u) << "bytes written past the end of out";
    }
}

// A row whose device temperature is negative, NaN or infinite gets -1 (every
// sample, int64 and int32); the other rows, greedy ones included, are sampled
// normally and match the reference.
TEST(SamplerApiGpu, InvalidTemperatureRowsGetMinusOne) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> temps{1.0f, -1.0f, nan, inf, 0.0f, 0.5f, -0.0f, -inf, 2.0f, -1e-30f, 0.8f};
  const std::vector<bool> invalid{false, true, true, true, false, false, false, true, false, true, false};
  const std::int64_t N = std::int64_t(temps.size());
  const Problem pb(DType::bf16, rng, 5003, 136, N);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  const int S = 2;
  const std::size_t n = std::size_t(N * S);
  const DeviceMemory dtemps = to_device(temps);
  const std::uint64_t seed = rng(), offset = rng();

  DeviceMemory out64(n * 8), out32(n * 4);
  testing::poison(out64);
  testing::poison(out32);
  SampleArgs a = pb.args(out64, S);
  a.temperatures = dtemps.as<const float>();
  a.seed = seed;
  a.offset = offset;
  sampler.sample(a, nullptr);
  a.out = out32.as<void>();
  a.index_type = IndexType::int32;
  sampler.sample(a, nullptr);
  const auto got = from_device<std::int64_t>(out64, n);
  const auto got32 = from_device<std::int32_t>(out32, n);
  for (std::int64_t r = 0; r < N; ++r)
    for (int s = 0; s < S; ++s) {
      const std::size_t i = std::size_t(r * S + s);
      if (invalid[std::size_t(r)]) {
        EXPECT_EQ(got[i], -1) << "row " << r << " temperature " << temps[std::size_t(r)];
      } else {
        EXPECT_TRUE(got[i] >= 0 && got[i] < pb.V) << "row " << r << " temperature " << temps[std::size_t(r)] << ": "
                                                  << got[i];
      }
      EXPECT_EQ(std::int64_t(got32[i]), got[i]) << "int32 row " << r;
    }
  std::vector<ReferenceRowParams> rp;
  for (float t : temps) rp.push_back({t, seed, offset});
  const auto ref = reference_sample(pb.w.data(), pb.h.data(), pb.dtype, pb.V, pb.d, N, rp, S);
  testing::compare_with_reference(got, ref, pb.V, S, "invalid temperatures");
}

// Scalar temperatures are checked on the host: negative, NaN and infinite
// ones throw InvalidArgument before anything is launched.
TEST(SamplerApiGpu, InvalidScalarTemperatureThrows) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
  const Problem pb(DType::bf16, rng, 1000, 64, 4);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  DeviceMemory out(std::size_t(pb.N) * 8);
  testing::poison(out);
  for (const float t : {-1.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    SampleArgs a = pb.args(out, 1);
    a.temperature = t;
    EXPECT_THROW(sampler.sample(a, nullptr), InvalidArgument) << "temperature " << t;
  }
  const auto untouched = from_device<std::int64_t>(out, std::size_t(pb.N));
  for (std::int64_t v : untouched) EXPECT_EQ(v, testing::kPoison64) << "a refused call wrote the output";
}

// reserve() then capture sample() into a CUDA graph: replays give the direct
// call's samples, and read the per-row device arrays at replay time.
TEST(SamplerApiGpu, GraphCaptureMatchesDirectCall) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
  const Problem pb(DType::bf16, rng);
  const int S = 3;
  const std::size_t n = std::size_t(pb.N * S);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  sampler.reserve(64, 4);  // covers N = 37, S = 3 and every smaller bucket

  std::vector<float> temps;
  std::vector<std::uint64_t> seeds, offsets;
  for (std::int64_t r = 0; r < pb.N; ++r) {
    temps.push_back(r % 5 == 4 ? 0.0f : 0.6f + 0.1f * float(r % 7));
    seeds.push_back(rng());
    offsets.push_back(rng());
  }
  const DeviceMemory dtemps = to_device(temps), dseeds = to_device(seeds);
  DeviceMemory doffsets = to_device(offsets);
  DeviceMemory out_graph(n * 8), out_direct(n * 8);
  SampleArgs a = pb.args(out_graph, S);
  a.temperatures = dtemps.as<const float>();
  a.seeds = dseeds.as<const std::uint64_t>();
  a.offsets = doffsets.as<const std::uint64_t>();

  testing::StreamGuard stream;
  testing::GraphGuard graph;
  FS_CU(cuStreamBeginCapture(stream.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  try {
    sampler.sample(a, stream.get());
  } catch (...) {
    CUgraph g = nullptr;
    driver::api().cuStreamEndCapture(stream.s, &g);
    if (g) driver::api().cuGraphDestroy(g);
    throw;
  }
  FS_CU(cuStreamEndCapture(stream.s, &graph.g));
  ASSERT_NE(graph.g, nullptr);
  testing::GraphExecGuard exec;
  FS_CU(cuGraphInstantiate(&exec.e, graph.g, 0));

  auto replay = [&] {
    testing::poison(out_graph);
    FS_CU(cuGraphLaunch(exec.e, stream.s));
    FS_CU(cuStreamSynchronize(stream.s));
    return from_device<std::int64_t>(out_graph, n);
  };
  auto direct = [&] {
    testing::poison(out_direct);
    SampleArgs b = a;
    b.out = out_direct.as<void>();
    sampler.sample(b, stream.get());
    FS_CU(cuStreamSynchronize(stream.s));
    return from_device<std::int64_t>(out_direct, n);
  };

  const auto graph1 = replay();
  const auto direct1 = direct();
  expect_all_in_range(graph1, pb.V, "graph replay");
  EXPECT_EQ(graph1, direct1) << "graph replay differs from the direct call";
  EXPECT_EQ(replay(), graph1) << "a second replay differs";

  // New offsets in the same device array: the replay picks them up.
  for (auto& o : offsets) o = rng();
  doffsets.upload(offsets.data(), offsets.size() * 8);
  const auto graph2 = replay();
  const auto direct2 = direct();
  EXPECT_EQ(graph2, direct2) << "replay with new offsets differs from the direct call";
  EXPECT_GT(count_differences(graph2, graph1), 0u) << "the replay ignored the new offsets";

  // And the direct calls match the reference.
  std::vector<ReferenceRowParams> rp;
  for (std::int64_t r = 0; r < pb.N; ++r) rp.push_back({temps[std::size_t(r)], seeds[std::size_t(r)], offsets[std::size_t(r)]});
  const auto ref = reference_sample(pb.w.data(), pb.h.data(), pb.dtype, pb.V, pb.d, pb.N, rp, S);
  testing::compare_with_reference(direct2, ref, pb.V, S, "graph test direct call");
}

// A spec that stages its logits in L2 needs a tile of workspace per block
// besides the candidates: reserve() makes room for it, so the capture needs
// no allocation and the replay samples as the direct call does.
TEST(SamplerApiGpu, L2StagingCapturesAfterReserve) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  const KernelSpec spec = testing::make_wgmma_coop_spec(DType::bf16, 128, 40, 6, 20, 1, 64, true);
  if (!testing::spec_runs_here(spec)) GTEST_SKIP() << "needs an sm_90 GPU for " << spec.to_string();
  std::mt19937_64 rng(testing::fresh_seed());
  const Problem pb(DType::bf16, rng);
  const int S = 2;
  const std::size_t n = std::size_t(pb.N * S);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype, spec));
  sampler.reserve(pb.N, S);
  DeviceMemory out_graph(n * 8), out_direct(n * 8);
  testing::StreamGuard stream;
  testing::GraphGuard graph;
  FS_CU(cuStreamBeginCapture(stream.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  std::string error;
  try {
    sampler.sample(pb.args(out_graph, S), stream.get());
  } catch (const std::exception& e) {
    error = e.what();
  }
  driver::api().cuStreamEndCapture(stream.s, &graph.g);
  ASSERT_TRUE(error.empty()) << "capture after reserve() failed: " << error;
  testing::GraphExecGuard exec;
  FS_CU(cuGraphInstantiate(&exec.e, graph.g, 0));
  testing::poison(out_graph);
  FS_CU(cuGraphLaunch(exec.e, stream.s));
  testing::poison(out_direct);
  sampler.sample(pb.args(out_direct, S), stream.get());
  FS_CU(cuStreamSynchronize(stream.s));
  const auto replayed = from_device<std::int64_t>(out_graph, n), direct = from_device<std::int64_t>(out_direct, n);
  expect_all_in_range(direct, pb.V, "direct call");
  EXPECT_EQ(replayed, direct);
}

// Without reserve(), a call that must grow the workspace while the stream is
// being captured throws InvalidArgument naming reserve(), launches nothing
// and leaves the capture valid; after reserve() the same capture works.
TEST(SamplerApiGpu, GrowingWorkspaceDuringCaptureThrows) {
  FS_REQUIRE_GPU();
  testing::use_process_context();
  std::mt19937_64 rng(testing::fresh_seed());
  const Problem pb(DType::bf16, rng);
  Sampler sampler(testing::sampler_options(pb.V, pb.d, pb.dtype));
  const int S = 16;
  const std::size_t n = std::size_t(pb.N * S);
  DeviceMemory out(n * 8);

  // Outside capture: load the kernel for this batch size and allocate a
  // workspace for one sample per row (16x too small for S = 16).
  SampleArgs a = pb.args(out, 1);
  a.seed = rng();
  sampler.sample(a, nullptr);
  (void)from_device<std::int64_t>(out, std::size_t(pb.N));

  testing::StreamGuard stream;
  a.num_samples = S;
  auto capture = [&](std::string* error) {
    FS_CU(cuStreamBeginCapture(stream.s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    try {
      sampler.sample(a, stream.get());
    } catch (const InvalidArgument& e) {
      *error = e.what();
    } catch (...) {
      CUgraph g = nullptr;
      driver::api().cuStreamEndCapture(stream.s, &g);
      if (g) driver::api().cuGraphDestroy(g);
      throw;
    }
    CUgraph g = nullptr;
    const CUresult end = driver::api().cuStreamEndCapture(stream.s, &g);
    EXPECT_EQ(end, CUDA_SUCCESS) << "cuStreamEndCapture: " << driver::error_text(end);
    return g;
  };

  std::string error;
  {
    testing::GraphGuard graph;
    graph.g = capture(&error);
  }
  EXPECT_FALSE(error.empty()) << "growing the workspace during capture did not throw InvalidArgument";
  EXPECT_NE(error.find("reserve"), std::string::npos) << "the message does not mention reserve(): " << error;

  sampler.reserve(pb.N, S);
  error.clear();
  testing::GraphGuard graph;
  graph.g = capture(&error);
  EXPECT_TRUE(error.empty()) << "capture after reserve() failed: " << error;
  ASSERT_NE(graph.g, nullptr);
  testing::GraphExecGuard exec;
  FS_CU(cuGraphInstantiate(&exec.e, graph.g, 0));
  testing::poison(out);
  FS_CU(cuGraphLaunch(exec.e, stream.s));
  FS_CU(cuStreamSynchronize(stream.s));
  const auto replayed = from_device<std::int64_t>(out, n);
  expect_all_in_range(replayed, pb.V, "replay after reserve");
  const auto direct = run64(n, [&](const DeviceMemory& o) {
    SampleArgs b = a;
    b.out = o.as<void>();
    sampler.sample(b, nullptr);
  });
  EXPECT_EQ(replayed, direct);
}

// Sampler lifetimes must not break the context: on a thread with no current
// context, a Sampler takes device 0's primary context; destroying it must not
// reset that context (which stays current on the thread), or a second Sampler
// would adopt a dead context. Runs in a child process because the rest of
// this binary keeps the primary context retained (testing::use_process_context),
// which would hide the problem.
TEST(SamplerApiGpuChild, DISABLED_SecondSamplerAfterFirstIsDestroyed) {
  FS_REQUIRE_GPU();
  // Deliberately no testing::use_process_context().
  std::mt19937_64 rng(1234);
  const std::int64_t V = 1000, d = 64, N = 4;
  const auto w = testing::random_storage(DType::bf16, std::size_t(V * d), 1.0, rng);
  const auto h = testing::random_storage(DType::bf16, std::size_t(N * d), 0.25, rng);
  auto run = [&](Sampler& sampler) {
    const DeviceMemory dw = to_device(w), dh = to_device(h);
    const auto got = run64(std::size_t(N), [&](const DeviceMemory& out) {
      SampleArgs a;
      a.weights = dw.as<const void>();
      a.hidden_states = dh.as<const void>();
      a.rows = N;
      a.out = out.as<void>();
      sampler.sample(a, nullptr);
    });
    expect_all_in_range(got, V, "sample");
    return got;
  };
  std::vector<std::int64_t> first_result;
  {
    Sampler first(testing::sampler_options(V, d, DType::bf16));
    first_result = run(first);
  }
  Sampler second(testing::sampler_options(V, d, DType::bf16));
  EXPECT_EQ(run(second), first_result);
}

TEST(SamplerApiGpu, SamplerLifetimeKeepsContextUsable) {
  FS_REQUIRE_GPU();
  char self[4096] = {};
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(len, 0) << "cannot resolve /proc/self/exe";
  // The child ignores the parent's sharding and report settings.
  const std::string child = "env -u GTEST_OUTPUT -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX -u GTEST_SHARD_STATUS_FILE '" +
                            std::string(self, std::size_t(len)) +
                            "' --gtest_filter=SamplerApiGpuChild.DISABLED_SecondSamplerAfterFirstIsDestroyed"
                            " --gtest_also_run_disabled_tests 2>&1";
  FILE* pipe = popen(child.c_str(), "r");
  ASSERT_NE(pipe, nullptr) << "popen failed: " << child;
  std::string output;
  char buf[4096];
  while (std::size_t got = std::fread(buf, 1, sizeof buf, pipe)) output.append(buf, got);
  const int status = pclose(pipe);
  if (output.find("CUDA_ERROR_DEVICES_UNAVAILABLE") != std::string::npos)
    GTEST_SKIP() << "the GPU does not accept a second process (exclusive compute mode)";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "a second Sampler created after the first was destroyed does not work:\n" << output;
  EXPECT_NE(output.find("[  PASSED  ] 1 test"), std::string::npos) << output;
}

}  // namespace
}  // namespace fusedsample
