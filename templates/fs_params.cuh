// fs_params.cuh: kernel parameter blocks, one definition for the host
// launcher and the generated kernels (passed by value).
#pragma once
#include "fs_types.cuh"

// Per-row sampling parameters. A null pointer means "use the scalar".
struct fs_row_params {
  const float* temperatures;  // [N] or null
  const fs_u64* seeds;        // [N] or null
  const fs_u64* offsets;      // [N] or null
  float temperature;
  fs_u32 pad0;
  fs_u64 seed;
  fs_u64 offset;
};

// Fused matmul + Gumbel-max tile kernel (and the materialized-logits variant).
// One launch does the whole sample: every tile folds its per-row winner into
// `best` with a 64-bit atomic max, and the last block to finish turns `best`
// into indices and zeroes `best` and `done` again (so the workspace is clean
// between launches, also under CUDA graph replay).
struct fs_fused_params {
  const void* weights;   // [V, d] (or logits [N, V] fp32 for the logits variant)
  const void* hidden;    // [N, d]
  fs_i64 vocab;          // V
  fs_i64 rows;           // N
  fs_i64 hidden_dim;     // d
  fs_row_params row;
  int num_samples;       // S
  int num_vtiles;        // ceil(V / T_V)
  fs_u64* best;          // [N][S] packed candidates (fs_pack_candidate), zero between launches
  fs_u32* done;          // blocks finished, zero between launches
  void* out;             // [N][S] int64 or int32
  int out_is_int64;
  int pad0;
  float* staging;        // wgmma_coop staging its logits in L2 (spec "l2"): one [T_V][T_N] fp32 tile per block; else null
  float* partials;       // wgmma_coop stream-K (spec "sk", stream_k.cuh): one tile's partial sums per block; else null
  fs_u32* sk_flags;      // [blocks]: 1 while a block's partial sums wait to be added; zero between launches
};

#if defined(__CUDACC__)
// Per-row parameter access on the device.
__device__ __forceinline__ float fs_row_temperature(const fs_row_params& p, fs_i64 n) {
  return p.temperatures ? p.temperatures[n] : p.temperature;
}
__device__ __forceinline__ fs_u64 fs_row_seed(const fs_row_params& p, fs_i64 n) {
  return p.seeds ? p.seeds[n] : p.seed;
}
__device__ __forceinline__ fs_u64 fs_row_offset(const fs_row_params& p, fs_i64 n) {
  return p.offsets ? p.offsets[n] : p.offset;
}
#endif

// Temperature classes: 0 is greedy; finite t >= FS_MIN_TEMPERATURE (2^-64)
// samples; anything else is invalid and yields index -1 for that row:
// negative, NaN, inf, and positive below 2^-64, where l / t overflows fp32
// for logits |l| >= 3.4e38 t (at t = 1e-38: |l| >= 3.4; 1/t itself for a
// subnormal t) and the scores would saturate to +-inf, whose winner need not
// be the argmax (at t = 2^-64 it takes |l| >= 1.8e19).
#define FS_MIN_TEMPERATURE 5.42101086242752217004e-20f  // 2^-64
FS_HD bool fs_temperature_valid(float t) {
  return t == 0.0f || (t >= FS_MIN_TEMPERATURE && t <= 3.40282346638528859812e+38f);
}

#define FS_NO_INDEX 0x7fffffff  // "no candidate" in a running (score, index)

// Candidate (s, v) beats (bs, bv): higher score, ties to the lower index.
// A NaN score never wins.
FS_HD bool fs_better(float s, int v, float bs, int bv) { return s > bs || (s == bs && v < bv); }

// A candidate (score, index) as one 64-bit key whose unsigned order is
// fs_better's order for every non-NaN score: the score's bits mapped to an
// order-preserving unsigned (after -0 -> +0, which fs_better treats as equal)
// above the index's complement (so equal scores prefer the lower index).
// Key 0 is below every candidate: "no winner yet".
FS_HD fs_u64 fs_pack_candidate(float s, int v) {
  fs_u32 u = fs_float_bits(s == 0.0f ? 0.0f : s);
  u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return ((fs_u64)u << 32) | (fs_u64)(~(fs_u32)v);
}
#if defined(__CUDACC__)
// Folds a candidate into a p.best slot: the relaxed, gpu-scoped atomic max
// that atomicMax is, issued as a reduction (PTX red), which returns nothing.
// NVRTC keeps atomicMax's atom even when its result is unused, and ptxas then
// gives that ATOMG a scoreboard that the next instruction waiting on the same
// one (in the next tile's k-loop hook, say) waits on until the atomic's round
// trip to L2 ends; REDG has none.
__device__ __forceinline__ void fs_fold_candidate(fs_u64* slot, fs_u64 key) {
  asm volatile("red.relaxed.gpu.global.max.u64 [%0], %1;" ::"l"(slot), "l"(key) : "memory");
}
#endif
FS_HD int fs_candidate_index(fs_u64 key) { return (int)~(fs_u32)key; }
// The score of a packed candidate (+0 for a -0 score); key 0 ("no winner yet")
// decodes to a NaN, which callers read as "no bound".
FS_HD float fs_candidate_score(fs_u64 key) {
  const fs_u32 u = (fs_u32)(key >> 32);
  return fs_bits_float((u & 0x80000000u) ? (u & 0x7fffffffu) : ~u);
}
