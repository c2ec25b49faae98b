// sampler_test_helpers.hpp: header-only helpers shared by the Sampler GPU
// tests (tests/runtime/sampler_*_gpu_test.cpp): device buffers from host
// vectors, a process-wide CUDA context, RAII for streams and graphs, host
// logits from stored inputs, the comparison against the CPU reference and
// the chi-squared machinery of the distribution test.
#pragma once
#include <cuda.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/spec_builder.hpp"
#include "fusedsample/fusedsample.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/device_memory.hpp"

namespace fusedsample::testing {

// ---------------------------------------------------------------------------
// Context and device buffers
// ---------------------------------------------------------------------------

// Retains device 0's primary context once for the life of the process and
// makes it current on the calling thread, as an application using the CUDA
// runtime would; Samplers adopt it. Buffers the tests allocate then never
// depend on how a Sampler manages the context (that is tested on its own, in
// a child process: SamplerApiGpu.SamplerLifetimeKeepsContextUsable).
inline void use_process_context() {
  static const CUcontext ctx = [] {
    CUdevice dev = 0;
    FS_CU(cuDeviceGet(&dev, 0));
    CUcontext c = nullptr;
    FS_CU(cuDevicePrimaryCtxRetain(&c, dev));
    return c;
  }();
  CUcontext current = nullptr;
  FS_CU(cuCtxGetCurrent(&current));
  if (current != ctx) FS_CU(cuCtxSetCurrent(ctx));
}

template <typename T>
runtime::DeviceMemory to_device(const std::vector<T>& host) {
  runtime::DeviceMemory m(std::max<std::size_t>(host.size() * sizeof(T), 16));
  m.upload(host.data(), host.size() * sizeof(T));
  return m;
}

inline runtime::DeviceMemory to_device_bytes(const void* host, std::size_t bytes) {
  runtime::DeviceMemory m(std::max<std::size_t>(bytes, 16));
  m.upload(host, bytes);
  return m;
}

template <typename T>
std::vector<T> from_device(const runtime::DeviceMemory& m, std::size_t count) {
  std::vector<T> host(count);
  m.download(host.data(), count * sizeof(T));
  return host;
}

// Fills the whole buffer with 0xAB bytes.
inline constexpr std::uint8_t kPoisonByte = 0xAB;
inline constexpr std::int64_t kPoison64 = std::int64_t(0xABABABABABABABABull);
inline constexpr std::int32_t kPoison32 = std::int32_t(0xABABABABu);
inline void poison(const runtime::DeviceMemory& m) { FS_CU(cuMemsetD8(m.get(), kPoisonByte, m.size())); }

// The storage of a random [rows, d] matrix is a prefix of a larger one's.
inline const void* storage_rows(const std::vector<std::uint8_t>& s, DType dtype, std::int64_t first_row, std::int64_t d) {
  return s.data() + std::size_t(first_row * d) * dtype_size(dtype);
}

inline double storage_value(const std::vector<std::uint8_t>& s, DType dtype, std::size_t i) {
  if (dtype == DType::fp32) {
    float f;
    std::memcpy(&f, &s[i * 4], 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, &s[i * 2], 2);
  return dtype == DType::bf16 ? bf16_to_float(h) : fp16_to_float(h);
}

// Exact (double) logits [N, V] of stored W [V, d] and H [N, d].
inline std::vector<double> host_logits(const std::vector<std::uint8_t>& w, const std::vector<std::uint8_t>& h,
                                       DType dtype, std::int64_t V, std::int64_t d, std::int64_t N) {
  std::vector<double> Wd(std::size_t(V * d)), Hd(std::size_t(N * d)), out(std::size_t(N * V));
  for (std::size_t i = 0; i < Wd.size(); ++i) Wd[i] = storage_value(w, dtype, i);
  for (std::size_t i = 0; i < Hd.size(); ++i) Hd[i] = storage_value(h, dtype, i);
  const unsigned threads = std::max(1u, std::min(std::thread::hardware_concurrency(), 32u));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::int64_t v = t; v < V; v += threads)
        for (std::int64_t n = 0; n < N; ++n) {
          double acc = 0;
          for (std::int64_t k = 0; k < d; ++k) acc += Wd[std::size_t(v * d + k)] * Hd[std::size_t(n * d + k)];
          out[std::size_t(n * V + v)] = acc;
        }
    });
  for (auto& th : pool) th.join();
  return out;
}

// A spec from its fields; the Sampler replaces the arch with the device's.
inline KernelSpec make_spec(DType dtype, int tile_v, int tile_n, int tile_d, int stages, int warps_m, int warps_n) {
  return build_spec(dtype, default_variant(dtype), Arch::sm_90, tile_v, tile_n, tile_d, stages, warps_m, warps_n);
}

// A wgmma (Hopper, sm_90a) spec from its fields.
inline KernelSpec make_wgmma_spec(DType dtype, int tile_v, int tile_n, int stages, int warps_m, int tile_d = 64) {
  return build_spec(dtype, Variant::wgmma, Arch::sm_90a, tile_v, tile_n, tile_d, stages, warps_m, 1);
}

// A warp-specialized wgmma spec (one producer, two consumer warpgroups).
inline KernelSpec make_wgmma_ws_spec(DType dtype, int tile_v, int tile_n, int stages) {
  return build_spec(dtype, Variant::wgmma_ws, Arch::sm_90a, tile_v, tile_n, 64, stages, 12, 1);
}

// A cooperative warp-specialized wgmma spec (two consumers share each tile;
// warps_m 16 or 20: one or two epilogue warpgroups; cluster: blocks per
// cluster, which share W or H through multicast copies).
inline KernelSpec make_wgmma_coop_spec(DType dtype, int tile_v, int tile_n, int stages, int warps_m, int cluster = 1,
                                       int tile_d = 64, bool stage_in_l2 = false, bool stream_k = false,
                                       bool reg_epilogue = false, bool ping_pong = false) {
  KernelSpec s = build_spec(dtype, Variant::wgmma_coop, Arch::sm_90a, tile_v, tile_n, tile_d, stages, warps_m, 1);
  s.cluster = cluster;
  s.stage_in_l2 = stage_in_l2;
  s.stream_k = stream_k;
  s.reg_epilogue = reg_epilogue;
  s.ping_pong = ping_pong;
  return s;
}

// The tile configs the tests force: at least three per dtype, and for
// bf16/fp16 the wgmma variant's corners (smallest and largest N, two 64-row
// blocks per warpgroup, two warpgroups) and the warp-specialized variants',
// which run on Hopper only.
inline KernelSpec with_l2_promotion(KernelSpec s, int bytes) {
  s.l2_promotion = bytes;
  return s;
}

inline std::vector<KernelSpec> forced_specs(DType dtype) {
  if (dtype == DType::fp32)
    return {make_spec(dtype, 64, 8, 32, 3, 4, 1), make_spec(dtype, 128, 32, 32, 3, 4, 1),
            make_spec(dtype, 128, 64, 16, 2, 4, 1)};
  return {make_spec(dtype, 64, 8, 32, 3, 4, 1),        make_spec(dtype, 128, 16, 64, 4, 4, 1),
          make_spec(dtype, 128, 64, 64, 3, 2, 2),      make_spec(dtype, 256, 32, 64, 3, 4, 2),
          make_wgmma_spec(dtype, 64, 8, 4, 4),         make_wgmma_spec(dtype, 128, 64, 3, 4),
          make_wgmma_spec(dtype, 128, 40, 4, 8),       make_wgmma_spec(dtype, 64, 256, 3, 4),
          // two 64-column sub-tiles per stage (T_d = 128), with a stage's MMAs in flight (4 stages) and without
          make_wgmma_spec(dtype, 128, 32, 4, 8, 128),  make_wgmma_spec(dtype, 64, 16, 3, 4, 128),
          make_wgmma_ws_spec(dtype, 64, 8, 6),         make_wgmma_ws_spec(dtype, 128, 128, 4),
          make_wgmma_ws_spec(dtype, 64, 256, 4),       make_wgmma_ws_spec(dtype, 128, 40, 3),
          make_wgmma_coop_spec(dtype, 128, 128, 4, 16), make_wgmma_coop_spec(dtype, 256, 64, 3, 20),
          make_wgmma_coop_spec(dtype, 128, 8, 2, 20),   make_wgmma_coop_spec(dtype, 128, 40, 3, 16),
          make_wgmma_coop_spec(dtype, 128, 128, 5, 20),
          // clusters: share H (N <= T_N, empty tiles past V) or share W (C divides the batch tiles)
          make_wgmma_coop_spec(dtype, 128, 128, 4, 20, 2), make_wgmma_coop_spec(dtype, 128, 64, 4, 16, 2),
          make_wgmma_coop_spec(dtype, 128, 32, 3, 20, 4),
          // T_N = 8 shared by two blocks: the box does not split into 8-row slices, rank 0 copies it whole
          make_wgmma_coop_spec(dtype, 128, 8, 3, 20, 2),
          // two 64-column boxes per stage (T_d = 128), alone and in a cluster
          make_wgmma_coop_spec(dtype, 128, 64, 4, 20, 1, 128), make_wgmma_coop_spec(dtype, 128, 32, 4, 16, 2, 128),
          // 128 accumulators per consumer: two m64n128 instructions per k-step, or two 64-row blocks
          make_wgmma_coop_spec(dtype, 128, 256, 2, 16), make_wgmma_coop_spec(dtype, 256, 128, 2, 16),
          // w12x1 (producer warp + three epilogue warps): one m64n256 per k16 step with 64-byte rows (T_d = 32),
          // and T_d = 32 in a cluster
          make_wgmma_coop_spec(dtype, 128, 256, 4, 12, 1, 32), make_wgmma_coop_spec(dtype, 128, 128, 6, 12, 2, 32),
          // logits staged in L2: 128 x 256 and 256 x 128 (in a cluster) with 128-byte rows, and w20x1
          make_wgmma_coop_spec(dtype, 128, 256, 4, 12, 1, 64, true), make_wgmma_coop_spec(dtype, 256, 128, 4, 12, 2, 64, true),
          make_wgmma_coop_spec(dtype, 128, 40, 6, 20, 1, 64, true),
          // stream-K (a cut tile's partial sums handed to the block that samples it)
          make_wgmma_coop_spec(dtype, 128, 64, 4, 20, 1, 64, false, true),
          make_wgmma_coop_spec(dtype, 256, 128, 4, 12, 1, 64, true, true),
          // the register epilogue (the consumers sample their accumulators): 64 and 128 per consumer thread
          make_wgmma_coop_spec(dtype, 128, 128, 4, 12, 1, 64, false, false, true),
          make_wgmma_coop_spec(dtype, 256, 128, 4, 12, 1, 64, false, false, true),
          // two batch columns per consumer thread (T_N = 256, one m64n256 per k16 step)
          make_wgmma_coop_spec(dtype, 128, 256, 4, 12, 1, 64, false, false, true),
          // and in a cluster (share W at N = 256, H with empty tiles past V below)
          make_wgmma_coop_spec(dtype, 256, 128, 4, 12, 2, 64, false, false, true),
          // ping-pong (each consumer whole tiles in turn), with the register epilogue
          make_wgmma_coop_spec(dtype, 128, 128, 6, 12, 1, 64, false, false, true, true),
          make_wgmma_coop_spec(dtype, 128, 128, 4, 12, 2, 64, false, false, true, true),
          // the tensor maps' L2 promotion (the same kernels, other maps): 128 bytes and none
          with_l2_promotion(make_wgmma_coop_spec(dtype, 128, 32, 4, 16, 1, 128), 128),
          with_l2_promotion(make_wgmma_coop_spec(dtype, 256, 128, 4, 12, 1, 64, false, false, true), 0),
          with_l2_promotion(make_wgmma_ws_spec(dtype, 64, 40, 4), 128)};
}

// Whether device 0 can run `spec` (wgmma needs compute capability 9.0).
inline bool spec_runs_here(const KernelSpec& spec) {
  if (!is_wgmma(spec.variant)) return true;
  const auto devices = list_devices();
  return !devices.empty() && devices[0].cc_major == 9 && devices[0].cc_minor == 0;
}

// The default config (nullopt: the built-in choice) and every forced config
// of `dtype` that device 0 can run: what the cross-config tests compare.
inline std::vector<std::optional<KernelSpec>> runnable_configs(DType dtype) {
  std::vector<std::optional<KernelSpec>> out{std::nullopt};
  for (const KernelSpec& k : forced_specs(dtype))
    if (spec_runs_here(k)) out.push_back(k);
  return out;
}

// "tv64_tn8_td32_s3_w4x1" (a gtest-safe name of a spec's tiles).
inline std::string tiles_name(const KernelSpec& s) {
  const std::string variant = is_wgmma(s.variant) ? std::string(to_string(s.variant)) + "_" : "";
  return variant + "tv" + std::to_string(s.tile_v) + "_tn" + std::to_string(s.tile_n) + "_td" + std::to_string(s.tile_d) + "_s" +
         std::to_string(s.stages) + "_w" + std::to_string(s.warps_m) + "x" + std::to_string(s.warps_n) +
         (s.cluster > 1 ? "_c" + std::to_string(s.cluster) : "") + (s.stage_in_l2 ? "_l2" : "") + (s.stream_k ? "_sk" : "") +
         (s.reg_epilogue ? "_re" : "") + (s.ping_pong ? "_pp" : "") +
         (s.l2_promotion != 256 ? "_l2p" + std::to_string(s.l2_promotion) : "");
}

inline SamplerOptions sampler_options(std::int64_t V, std::int64_t d, DType dtype,
                                      std::optional<KernelSpec> spec = std::nullopt) {
  SamplerOptions o;
  o.vocab = V;
  o.hidden = d;
  o.dtype = dtype;
  o.spec = spec;
  return o;
}

// ---------------------------------------------------------------------------
// CUDA stream / graph RAII
// ---------------------------------------------------------------------------

struct StreamGuard {
  CUstream s = nullptr;
  StreamGuard() { FS_CU(cuStreamCreate(&s, CU_STREAM_DEFAULT)); }
  ~StreamGuard() {
    if (const auto* cu = driver::try_api(nullptr); cu && s) cu->cuStreamDestroy(s);
  }
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;
  Stream get() const { return reinterpret_cast<Stream>(s); }
};

struct GraphGuard {
  CUgraph g = nullptr;
  ~GraphGuard() {
    if (const auto* cu = driver::try_api(nullptr); cu && g) cu->cuGraphDestroy(g);
  }
};

struct GraphExecGuard {
  CUgraphExec e = nullptr;
  ~GraphExecGuard() {
    if (const auto* cu = driver::try_api(nullptr); cu && e) cu->cuGraphExecDestroy(e);
  }
};

// ---------------------------------------------------------------------------
// Comparison against the CPU reference
// ---------------------------------------------------------------------------

// The most near-ties (reference top-2 gap under the tolerance) a comparison
// of `pairs` independent pairs may hold: the smallest k with
// P(Binomial(pairs, 0.02) > k) <= 1e-6. So a tolerance under which more than
// ~2 % of pairs are near-ties (a loose tolerance makes the comparison vacuous)
// fails, and a sound one fails less than once in a million comparisons. (The
// bound it replaces, 0.02 pairs + 1, rejected 3 near-ties in 64 pairs,
// which the fp32 shapes of the unfused test produce about once in 2000 runs.)
inline std::int64_t near_tie_limit(std::int64_t pairs) {
  constexpr double p = 0.02, alpha = 1e-6;
  const double n = double(pairs);
  double cdf = 0;  // P(X <= k)
  for (std::int64_t k = 0; k < pairs; ++k) {
    const double x = double(k);  // log P(X = k), in logs so that large n does not underflow
    cdf += std::exp(std::lgamma(n + 1) - std::lgamma(x + 1) - std::lgamma(n - x + 1) + x * std::log(p) +
                    (n - x) * std::log1p(-p));
    if (1.0 - cdf <= alpha) return k;
  }
  return pairs;
}

struct Comparison {
  std::int64_t pairs = 0;       // (row, sample) pairs
  std::int64_t close = 0;       // reference best - runner_up < tolerance: either order is correct
  std::int64_t close_events = 0;  // the same, counting a greedy row's identical samples once
  std::int64_t mismatches = 0;  // decided pairs where the GPU disagrees
  std::int64_t out_of_range = 0;
};

// Compares GPU indices [N*S] (int64 values; S samples per row) with the reference. Pairs whose
// reference top-2 gap is under the reference tolerance may legitimately
// differ; they are counted, not compared (but must still be valid indices).
inline Comparison compare_with_reference(const std::vector<std::int64_t>& got, const std::vector<ReferenceResult>& ref,
                                         std::int64_t V, int S, const std::string& what) {
  Comparison c;
  c.pairs = std::int64_t(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const std::int64_t g = got[i];
    const bool in_range = ref[i].index < 0 ? g == -1 : (g >= 0 && g < V);
    if (!in_range) {
      if (++c.out_of_range <= 5)
        ADD_FAILURE() << what << ": row " << i / S << " sample " << i % S << " got " << g << " (V=" << V
                      << ", reference " << ref[i].index << ")";
      continue;
    }
    if (ref[i].index >= 0 && ref[i].best - ref[i].runner_up < ref[i].tolerance) {
      ++c.close;
      // A greedy row draws no noise: its S samples share one score pair and are
      // one near-tie, not S independent ones.
      const bool repeat = i % S != 0 && ref[i].best == ref[i - 1].best && ref[i].runner_up == ref[i - 1].runner_up;
      if (!repeat) ++c.close_events;
      continue;
    }
    if (g != ref[i].index) {
      if (++c.mismatches <= 5)
        ADD_FAILURE() << what << ": row " << i / S << " sample " << i % S << " got " << g << ", reference "
                      << ref[i].index << " (gap " << ref[i].best - ref[i].runner_up << ", tolerance "
                      << ref[i].tolerance << ")";
    }
  }
  EXPECT_EQ(c.out_of_range, 0) << what;
  EXPECT_EQ(c.mismatches, 0) << what;
  EXPECT_LE(c.close_events, near_tie_limit(c.pairs))
      << what << ": too many near-ties (" << c.close_events << " independent, " << c.close << " of " << c.pairs
      << " pairs)";
  return c;
}

// ---------------------------------------------------------------------------
// Chi-squared statistics
// ---------------------------------------------------------------------------

inline double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// Upper-tail standard normal quantile for p = 1e-4.
inline constexpr double kZ1e4 = 3.7190164854556804;

// Wilson-Hilferty: the chi-squared quantile with `dof` degrees of freedom
// whose upper tail is the normal tail of z.
inline double chi2_critical_wh(double dof, double z) {
  const double a = 2.0 / (9.0 * dof);
  const double t = 1.0 - a + z * std::sqrt(a);
  return dof * t * t * t;
}

// P(chi2_dof > x) by Wilson-Hilferty.
inline double chi2_upper_tail_wh(double dof, double x) {
  const double a = 2.0 / (9.0 * dof);
  const double z = (std::cbrt(x / dof) - (1.0 - a)) / std::sqrt(a);
  return normal_upper_tail(z);
}

// P(noncentral chi2(dof, lambda) > x): Patnaik's approximation c*chi2(nu)
// with c = (k + 2l)/(k + l), nu = (k + l)^2/(k + 2l), then Wilson-Hilferty.
inline double noncentral_chi2_power(double dof, double lambda, double x) {
  const double c = (dof + 2 * lambda) / (dof + lambda);
  const double nu = (dof + lambda) * (dof + lambda) / (dof + 2 * lambda);
  return chi2_upper_tail_wh(nu, x / c);
}

struct Chi2Result {
  double statistic = 0;
  int dof = 0;
  int bins = 0;
  double critical = 0;  // p = 1e-4
  double lambda_top_bias = 0;  // noncentrality of a 1% relative bias on the top token
  double power = 0;            // of the test against that bias
  std::uint64_t impossible_hits = 0;  // samples of tokens with p < 1e-12
};

// Goodness of fit of counts[V] (total M) against probabilities p[V]. Bins
// with expected count < 5 merge into one "rest" bin (itself merged into the
// smallest kept bin if still under 5).
inline Chi2Result chi2_goodness_of_fit(const std::vector<std::uint64_t>& counts, const std::vector<double>& p) {
  Chi2Result r;
  double M = 0;
  for (auto c : counts) M += double(c);
  std::vector<double> obs, expct, prob;
  double rest_o = 0, rest_e = 0, rest_p = 0;
  std::size_t top = 0;
  for (std::size_t v = 0; v < p.size(); ++v) {
    if (p[v] > p[top]) top = v;
    if (p[v] < 1e-12) r.impossible_hits += counts[v];
    const double e = M * p[v];
    if (e >= 5) {
      obs.push_back(double(counts[v]));
      expct.push_back(e);
      prob.push_back(p[v]);
    } else {
      rest_o += double(counts[v]);
      rest_e += e;
      rest_p += p[v];
    }
  }
  if (rest_e >= 5 || expct.empty()) {
    obs.push_back(rest_o);
    expct.push_back(rest_e);
    prob.push_back(rest_p);
  } else if (rest_o > 0 || rest_e > 0) {
    const std::size_t smallest = std::size_t(std::min_element(expct.begin(), expct.end()) - expct.begin());
    obs[smallest] += rest_o;
    expct[smallest] += rest_e;
    prob[smallest] += rest_p;
  }
  r.bins = int(obs.size());
  r.dof = r.bins - 1;
  for (std::size_t i = 0; i < obs.size(); ++i) r.statistic += (obs[i] - expct[i]) * (obs[i] - expct[i]) / expct[i];
  if (r.dof < 1) return r;
  r.critical = chi2_critical_wh(r.dof, kZ1e4);
  // Alternative: the top token's probability is 1% higher, every other bin
  // gives up mass in proportion. lambda = M sum (p'_i - p_i)^2 / p_i.
  const double pt = p[top], eps = 0.01 * pt;
  r.lambda_top_bias = M * (eps * eps / pt + eps * eps / (1.0 - pt));
  r.power = noncentral_chi2_power(r.dof, r.lambda_top_bias, r.critical);
  return r;
}

}  // namespace fusedsample::testing
