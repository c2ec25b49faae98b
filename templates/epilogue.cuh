// epilogue.cuh: Gumbel-max over one (T_N x T_V) tile of fp32 logits staged in
// shared memory. Each warp takes FS_EPI_R batch rows at a time; each lane
// takes groups of four consecutive vocabulary indices (one Philox call per
// group and row), keeps a running (score, index) per row and the warp reduces
// them. Folds the tile's winner per (row, sample) into p.best (atomic max of
// packed candidates, so the order of tiles cannot change the result).
// Needs FS_TV, FS_TN, FS_THREADS, FS_LDL (row stride of the staged tile);
// FS_EPI_N (default FS_TN) is the number of batch rows staged per call;
// FS_EPI_WARPS (default all) the warps that share it, `warp` being 0.. of them.
#pragma once
#include "fs_params.cuh"
#include "philox.cuh"
#include "gumbel.cuh"

#ifndef FS_EPI_N
#define FS_EPI_N FS_TN
#endif

__device__ __forceinline__ void fs_warp_argmax(float& best, int& bi) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) {
    const float os = __shfl_xor_sync(0xffffffffu, best, m);
    const int oi = __shfl_xor_sync(0xffffffffu, bi, m);
    if (fs_better(os, oi, best, bi)) { best = os; bi = oi; }
  }
}

// Rows per warp handled together: their Philox and log chains are
// independent, so interleaving them hides the latency of each.
#ifndef FS_EPI_WARPS
#define FS_EPI_WARPS (FS_THREADS / 32)  // warps sharing one epilogue call
#endif
#ifndef FS_EPI_R
#define FS_EPI_R (FS_EPI_N >= 4 * FS_EPI_WARPS ? 4 : FS_EPI_N >= 2 * FS_EPI_WARPS ? 2 : 1)
#endif

__device__ __forceinline__ void fs_tile_epilogue(const float* L, const fs_fused_params& p,
                                                 fs_i64 v0, fs_i64 n0, int warp = threadIdx.x >> 5) {
  const int lane = threadIdx.x & 31;
  for (int nb = warp * FS_EPI_R; nb < FS_EPI_N; nb += FS_EPI_WARPS * FS_EPI_R) {
    bool exists[FS_EPI_R], valid[FS_EPI_R], greedy[FS_EPI_R];
    float inv_tau[FS_EPI_R];
    fs_u64 seed[FS_EPI_R], offset[FS_EPI_R];
    const float* row[FS_EPI_R];
#pragma unroll
    for (int r = 0; r < FS_EPI_R; ++r) {
      const int nl = nb + r;
      const fs_i64 n = n0 + nl;
      exists[r] = nl < FS_EPI_N && n < p.rows;
      const float tau = exists[r] ? fs_row_temperature(p.row, n) : -1.0f;
      greedy[r] = (tau == 0.0f);
      valid[r] = fs_temperature_valid(tau);
      inv_tau[r] = (greedy[r] || !valid[r]) ? 1.0f : 1.0f / tau;
      seed[r] = exists[r] ? fs_row_seed(p.row, n) : 0;
      offset[r] = exists[r] ? fs_row_offset(p.row, n) : 0;
      row[r] = L + (nl < FS_EPI_N ? nl : 0) * FS_LDL;
    }
    for (int s = 0; s < p.num_samples; ++s) {
      float best[FS_EPI_R];
      int bi[FS_EPI_R];
#pragma unroll
      for (int r = 0; r < FS_EPI_R; ++r) {
        best[r] = -__int_as_float(0x7f800000);  // -inf
        bi[r] = FS_NO_INDEX;
      }
      for (int g = lane; g < FS_TV / 4; g += 32) {
        const fs_i64 v = v0 + 4 * g;
        if (v >= p.vocab) break;
        float4 l4[FS_EPI_R];
        bool noise = false;  // some sampled row of this group could still win
#pragma unroll
        for (int r = 0; r < FS_EPI_R; ++r) {
          l4[r] = *reinterpret_cast<const float4*>(row[r] + 4 * g);
          // Exact skip: every noise value is <= FS_GUMBEL_MAX and rounding is
          // monotone, so if l * inv_tau + FS_GUMBEL_MAX (rounded as the score
          // is) is below this lane's running best for every l of the group,
          // none of the four can win or tie: their noise is not drawn.
          // fmaxf drops NaN (a NaN score never wins); greedy rows need none.
          const float lmax = fmaxf(fmaxf(l4[r].x, l4[r].y), fmaxf(l4[r].z, l4[r].w));
          noise |= valid[r] && !greedy[r] && !(FS_FMA(lmax, inv_tau[r], FS_GUMBEL_MAX) < best[r]);
        }
        if (noise) {
          // Noise for every row of the group (also greedy/invalid/hopeless
          // ones, then ignored) so the R chains stay branch-free and interleave.
#pragma unroll
          for (int r = 0; r < FS_EPI_R; ++r) {
            const float lv[4] = {l4[r].x, l4[r].y, l4[r].z, l4[r].w};
            const fs_philox_ctr c = fs_noise_block(seed[r], offset[r], (fs_u64)v, (fs_u32)s);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const float sc = greedy[r] ? lv[j] : FS_FMA(lv[j], inv_tau[r], fs_gumbel_from_bits(c.v[j]));
              if (valid[r] && v + j < p.vocab && fs_better(sc, (int)(v + j), best[r], bi[r])) {
                best[r] = sc;
                bi[r] = (int)(v + j);
              }
            }
          }
        } else {
#pragma unroll
          for (int r = 0; r < FS_EPI_R; ++r) {
            const float lv[4] = {l4[r].x, l4[r].y, l4[r].z, l4[r].w};
#pragma unroll
            for (int j = 0; j < 4; ++j)
              if (greedy[r] && valid[r] && v + j < p.vocab && fs_better(lv[j], (int)(v + j), best[r], bi[r])) {
                best[r] = lv[j];
                bi[r] = (int)(v + j);
              }
          }
        }
      }
#pragma unroll
      for (int r = 0; r < FS_EPI_R; ++r) fs_warp_argmax(best[r], bi[r]);
      if (lane == 0) {
#pragma unroll
        for (int r = 0; r < FS_EPI_R; ++r)
          if (exists[r] && bi[r] != FS_NO_INDEX)
            atomicMax(p.best + (n0 + nb + r) * p.num_samples + s, fs_pack_candidate(best[r], bi[r]));
      }
    }
  }
}
