// epilogue.cuh: Gumbel-max over one (T_N x T_V) tile of fp32 logits staged in
// shared memory. One warp per batch row; each lane takes groups of four
// consecutive vocabulary indices (one Philox call per group), keeps a running
// (score, index) and the warp reduces it. Writes one partial per (sample, row).
// Needs FS_TV, FS_TN, FS_THREADS, FS_LDL (row stride of the staged tile);
// FS_EPI_N (default FS_TN) is the number of batch rows staged per call.
#pragma once
#include "fs_params.cuh"
#include "philox.cuh"
#include "gumbel.cuh"

#define FS_NO_INDEX 0x7fffffff
#ifndef FS_EPI_N
#define FS_EPI_N FS_TN
#endif

// Candidate (s, v) beats (bs, bv): higher score, ties to the lower index.
// A NaN score never wins.
__device__ __forceinline__ bool fs_better(float s, int v, float bs, int bv) {
  return s > bs || (s == bs && v < bv);
}

__device__ __forceinline__ void fs_warp_argmax(float& best, int& bi) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) {
    const float os = __shfl_xor_sync(0xffffffffu, best, m);
    const int oi = __shfl_xor_sync(0xffffffffu, bi, m);
    if (fs_better(os, oi, best, bi)) { best = os; bi = oi; }
  }
}

__device__ __forceinline__ void fs_tile_epilogue(const float* L, const fs_fused_params& p,
                                                 fs_i64 v0, fs_i64 n0, int vtile) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  for (int nl = warp; nl < FS_EPI_N; nl += FS_THREADS / 32) {
    const fs_i64 n = n0 + nl;
    if (n >= p.rows) break;
    const float tau = fs_row_temperature(p.row, n);
    const bool greedy = (tau == 0.0f);
    const bool valid = fs_temperature_valid(tau);
    const float inv_tau = (greedy || !valid) ? 1.0f : 1.0f / tau;
    const fs_u64 seed = fs_row_seed(p.row, n);
    const fs_u64 offset = fs_row_offset(p.row, n);
    const float* row = L + nl * FS_LDL;
    for (int s = 0; s < p.num_samples; ++s) {
      float best = -__int_as_float(0x7f800000);  // -inf
      int bi = FS_NO_INDEX;
      if (valid) {
        for (int g = lane; g < FS_TV / 4; g += 32) {
          const fs_i64 v = v0 + 4 * g;
          if (v >= p.vocab) break;
          const float4 l4 = *reinterpret_cast<const float4*>(row + 4 * g);
          const float lv[4] = {l4.x, l4.y, l4.z, l4.w};
          fs_philox_ctr r;
          if (!greedy) r = fs_noise_block(seed, offset, (fs_u64)v, (fs_u32)s);
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            if (v + j < p.vocab) {
              const float sc = greedy ? lv[j] : FS_FMA(lv[j], inv_tau, fs_gumbel_from_bits(r.v[j]));
              if (fs_better(sc, (int)(v + j), best, bi)) { best = sc; bi = (int)(v + j); }
            }
          }
        }
      }
      fs_warp_argmax(best, bi);
      if (lane == 0) {
        const fs_i64 o = ((fs_i64)s * p.rows + n) * p.num_vtiles + vtile;
        p.part_score[o] = best;
        p.part_index[o] = bi;
      }
    }
  }
}
