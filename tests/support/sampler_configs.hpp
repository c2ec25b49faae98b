// sampler_configs.hpp: the kernel configs the Sampler GPU tests force
// (specs from their fields, the forced list per dtype, which of them device 0
// runs, a gtest-safe name of each), and SamplerOptions for a head.
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "fusedsample/fusedsample.hpp"
#include "tests/support/spec_builder.hpp"

namespace fusedsample::testing {

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

// The eager stage release (er: TMA-fed variants).
inline KernelSpec with_eager_release(KernelSpec s) {
  s.eager_release = true;
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
          // batch tiles fitted to 129-255 rows (T_N = 160, 192, 224: column tid + 128 only for tid < T_N - 128),
          // alone, with stream-K, and in a cluster (H shared in slices of 96 rows)
          make_wgmma_coop_spec(dtype, 128, 160, 4, 12, 1, 64, false, false, true),
          make_wgmma_coop_spec(dtype, 128, 224, 4, 12, 1, 64, false, true, true),
          make_wgmma_coop_spec(dtype, 128, 192, 3, 12, 2, 64, false, false, true),
          // and to any multiple of 8 (fit_batch_tile, session 65): the group maxima's last 32-column chunk with 1,
          // 2 or 3 of its 4 column groups (T_N = 136, 176, 248), alone, with stream-K, in a cluster (H whole)
          make_wgmma_coop_spec(dtype, 128, 136, 4, 12, 1, 64, false, false, true),
          make_wgmma_coop_spec(dtype, 128, 176, 4, 12, 1, 64, false, true, true),
          make_wgmma_coop_spec(dtype, 128, 248, 3, 12, 2, 64, false, false, true),
          // and below 128 rows (session 66: batches of 65-127; column tid only for tid < T_N): 72, 112 and 120
          // (1, 2 and 3 column groups in the last chunk), alone, with stream-K, in a cluster; and the narrowest,
          // 64 (half the threads own a column, whole chunks)
          make_wgmma_coop_spec(dtype, 128, 64, 4, 12, 1, 64, false, false, true),
          make_wgmma_coop_spec(dtype, 256, 72, 4, 12, 1, 64, false, false, true),
          make_wgmma_coop_spec(dtype, 128, 112, 4, 12, 1, 64, false, true, true),
          make_wgmma_coop_spec(dtype, 256, 120, 3, 12, 2, 64, false, false, true),
          // ping-pong (each consumer whole tiles in turn), with the register epilogue
          make_wgmma_coop_spec(dtype, 128, 128, 6, 12, 1, 64, false, false, true, true),
          make_wgmma_coop_spec(dtype, 128, 128, 4, 12, 2, 64, false, false, true, true),
          // the tensor maps' L2 promotion (the same kernels, other maps): 128 bytes and none
          with_l2_promotion(make_wgmma_coop_spec(dtype, 128, 32, 4, 16, 1, 128), 128),
          with_l2_promotion(make_wgmma_coop_spec(dtype, 256, 128, 4, 12, 1, 64, false, false, true), 0),
          with_l2_promotion(make_wgmma_ws_spec(dtype, 64, 40, 4), 128),
          // the eager stage release: the N <= 64 tile, a cluster, the register epilogue, wgmma_ws
          with_eager_release(with_l2_promotion(make_wgmma_coop_spec(dtype, 128, 64, 4, 16, 1, 128), 0)),
          with_eager_release(make_wgmma_coop_spec(dtype, 128, 32, 4, 20, 2, 128)),
          with_eager_release(make_wgmma_coop_spec(dtype, 256, 128, 4, 12, 1, 64, false, false, true)),
          with_eager_release(make_wgmma_ws_spec(dtype, 128, 40, 3)),
          // and with stream-K (the H200 table's large-shape buckets 16 and 32)
          with_eager_release(with_l2_promotion(make_wgmma_coop_spec(dtype, 128, 32, 4, 16, 1, 128, false, true), 0))};
}

// Whether device 0 can run `spec` (wgmma needs compute capability 9.0).
inline bool spec_runs_here(const KernelSpec& spec) {
  if (!is_wgmma(spec.variant)) return true;
  const auto devices = list_devices();
  return !devices.empty() && devices[0].cc_major == 9 && devices[0].cc_minor == 0;
}

// The default config (nullopt: the built-in choice) and every forced config
// of `dtype` that device 0 can run: what the cross-config tests compare.
// A GPU that is not an sm_90 (Hopper) runs none of the wgmma specs: that is
// said once per dtype on stderr, so a run that covered fewer configs shows it.
inline std::vector<std::optional<KernelSpec>> runnable_configs(DType dtype) {
  std::vector<std::optional<KernelSpec>> out{std::nullopt};
  int dropped = 0;
  for (const KernelSpec& k : forced_specs(dtype))
    if (spec_runs_here(k)) out.push_back(k);
    else ++dropped;
  static bool said[3] = {false, false, false};
  if (dropped > 0 && !said[int(dtype) % 3]) {
    said[int(dtype) % 3] = true;
    std::fprintf(stderr, "note: %d of the %s forced configs need an sm_90 GPU and are not run here\n", dropped,
                 std::string(to_string(dtype)).c_str());
  }
  return out;
}

// "tv64_tn8_td32_s3_w4x1" (a gtest-safe name of a spec's tiles).
inline std::string tiles_name(const KernelSpec& s) {
  const std::string variant = is_wgmma(s.variant) ? std::string(to_string(s.variant)) + "_" : "";
  return variant + "tv" + std::to_string(s.tile_v) + "_tn" + std::to_string(s.tile_n) + "_td" + std::to_string(s.tile_d) + "_s" +
         std::to_string(s.stages) + "_w" + std::to_string(s.warps_m) + "x" + std::to_string(s.warps_n) +
         (s.cluster > 1 ? "_c" + std::to_string(s.cluster) : "") + (s.stage_in_l2 ? "_l2" : "") + (s.stream_k ? "_sk" : "") +
         (s.reg_epilogue ? "_re" : "") + (s.ping_pong ? "_pp" : "") + (s.eager_release ? "_er" : "") +
         (s.l2_promotion != 256 ? "_l2p" + std::to_string(s.l2_promotion) : "");
}

// The unfused path's sampler configs the tests force (SamplerOptions::logits_spec; nullopt: the Sampler's
// built-in choice by rows). They differ in every field the logits kernel reads: 1, 2 or 4 noise groups per thread
// and row (one, two or four per Philox call; the cooperative take-up pairs a lane's two groups in one round), 2-8
// warps, 8-32 rows, 2-4 stages.
inline std::vector<std::optional<KernelSpec>> logits_configs() {
  std::vector<std::optional<KernelSpec>> out{std::nullopt};
  for (const char* text : {"fp32 sm_90 logits tv256 tn8 td64 s2 w4x1", "fp32 sm_90 logits tv512 tn16 td64 s3 w8x1",
                           "fp32 sm_90 logits tv64 tn8 td64 s4 w2x1", "fp32 sm_90 logits tv128 tn32 td64 s2 w4x2",
                           "fp32 sm_90 logits tv256 tn32 td64 s2 w4x1"})
    out.push_back(KernelSpec::parse(text));
  return out;
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

}  // namespace fusedsample::testing
