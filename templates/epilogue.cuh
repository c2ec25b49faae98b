// epilogue.cuh: Gumbel-max over one (T_N x T_V) tile of fp32 logits staged in
// shared memory. Each warp takes FS_EPI_R batch rows at a time; each lane
// takes groups of four consecutive vocabulary indices (one Philox call per
// group and row), keeps a running (score, index) per row and the warp reduces
// them. Folds the tile's winner per (row, sample) into p.best (atomic max of
// packed candidates, so the order of tiles cannot change the result).
//
// Exact pruning (docs/rng.md section 6): the noise of a value is only computed
// exactly (two ~20-operation logs) when the value may still win. A value may
// win unless an upper bound on its score is below a lower bound on the row's
// final best score. Bounds: FS_GUMBEL_MAX (then not even Philox runs), and the
// interval fs_gumbel_approx +- fs_score_margin (two SFU logs); lower bounds:
// the best candidate any tile has folded into p.best so far, and the largest
// interval low end in the warp.
// Needs FS_TV, FS_TN, FS_THREADS, FS_LDL (row stride of the staged tile);
// FS_EPI_N (default FS_TN) is the number of batch rows staged per call;
// FS_EPI_WARPS (default all) the warps that share it, `warp` being 0.. of them.
#pragma once
#include "fs_params.cuh"
#include "philox.cuh"
#include "gumbel.cuh"
#include "gumbel_bound.cuh"

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

__device__ __forceinline__ float fs_warp_max(float x) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, m));
  return x;
}

// The best score any tile has folded in for (row n, sample s) so far: a lower
// bound on the final winner's score (p.best only grows). -inf when empty.
__device__ __forceinline__ float fs_bound_from_key(fs_u64 key) {
  return fmaxf(fs_candidate_score(key), -__int_as_float(0x7f800000));  // key 0 -> NaN -> -inf
}
__device__ __forceinline__ fs_u64 fs_best_key_so_far(const fs_fused_params& p, fs_i64 n, int s) {
  return __ldcg(p.best + n * p.num_samples + s);
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
  const float neg_inf = -__int_as_float(0x7f800000);
  // Lane q prefetches the best key so far of this warp's (row batch t, row r,
  // sample s) with q = (t * FS_EPI_R + r) * S + s, so the L2 round trip is
  // paid once per call instead of once per row batch (keys past 32 are read
  // when needed).
  fs_u64 prefetched = 0;
  {
    const int rs = lane / p.num_samples, t = rs / FS_EPI_R;
    const int nl = warp * FS_EPI_R + t * FS_EPI_WARPS * FS_EPI_R + rs % FS_EPI_R;
    if (nl < FS_EPI_N && n0 + nl < p.rows) prefetched = fs_best_key_so_far(p, n0 + nl, lane % p.num_samples);
  }
  for (int nb = warp * FS_EPI_R, t = 0; nb < FS_EPI_N; nb += FS_EPI_WARPS * FS_EPI_R, ++t) {
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
      float best[FS_EPI_R], bound[FS_EPI_R];  // bound: warp-uniform lower bound on the row's final score
      int bi[FS_EPI_R];
#pragma unroll
      for (int r = 0; r < FS_EPI_R; ++r) {
        best[r] = neg_inf;
        bi[r] = FS_NO_INDEX;
        const int q = (t * FS_EPI_R + r) * p.num_samples + s;  // warp-uniform
        const fs_u64 key = q < 32 ? (fs_u64)__shfl_sync(0xffffffffu, (unsigned long long)prefetched, q)
                                  : (exists[r] ? fs_best_key_so_far(p, n0 + nb + r, s) : 0);
        bound[r] = (exists[r] && valid[r]) ? fs_bound_from_key(key) : neg_inf;
      }
      // All lanes run every pass (the warp max below needs them all).
      for (int g0 = 0; g0 < FS_TV / 4; g0 += 32) {
        const int g = g0 + lane;
        const fs_i64 v = v0 + 4 * g;
        const bool in = g < FS_TV / 4 && v < p.vocab;
        float4 l4[FS_EPI_R];
        bool noise = false;  // some sampled row of this lane's group could still win
#pragma unroll
        for (int r = 0; r < FS_EPI_R; ++r) {
          l4[r] = in ? *reinterpret_cast<const float4*>(row[r] + 4 * g) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
          // Every noise value is <= FS_GUMBEL_MAX and rounding is monotone:
          // if l * inv_tau + FS_GUMBEL_MAX is below the bound for every l of
          // the group, none of the four can win or tie. fmaxf drops NaN (a
          // NaN score never wins); greedy rows need no noise.
          const float lmax = fmaxf(fmaxf(l4[r].x, l4[r].y), fmaxf(l4[r].z, l4[r].w));
          noise |= in && valid[r] && !greedy[r] && !(FS_FMA(lmax, inv_tau[r], FS_GUMBEL_MAX) < bound[r]);
        }
        if (__any_sync(0xffffffffu, noise)) {
          // Pass 1: Philox for every row of the group (also greedy/invalid
          // ones, then ignored, so the R chains stay branch-free and
          // interleave), approximate scores, their intervals' low ends.
          fs_philox_ctr c[FS_EPI_R];
          float hi[FS_EPI_R][4];  // interval high ends
          unsigned ok = 0;        // bit 4r+j: value j of row r is a candidate at all
#pragma unroll
          for (int r = 0; r < FS_EPI_R; ++r) {
            c[r] = fs_noise_block(seed[r], offset[r], (fs_u64)v, (fs_u32)s);
            const float lv[4] = {l4[r].x, l4[r].y, l4[r].z, l4[r].w};
            float lo = neg_inf;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const float st = greedy[r] ? lv[j] : __fmaf_rn(lv[j], inv_tau[r], fs_gumbel_approx(c[r].v[j]));
              const float m = greedy[r] ? 0.0f : fs_score_margin(st);
              hi[r][j] = __fadd_rn(st, m);  // NaN (from a NaN or infinite logit) never compares below
              if (in && valid[r] && v + j < p.vocab) {
                ok |= 1u << (4 * r + j);
                lo = fmaxf(lo, __fadd_rn(st, -m));  // fmaxf drops NaN
              }
            }
            bound[r] = fmaxf(bound[r], fs_warp_max(lo));
          }
          // Pass 2: exact scores only where the interval reaches the bound
          // (or is NaN); a value below it loses to the value that set it.
#pragma unroll
          for (int r = 0; r < FS_EPI_R; ++r) {
            const float lv[4] = {l4[r].x, l4[r].y, l4[r].z, l4[r].w};
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              if (((ok >> (4 * r + j)) & 1u) && !(hi[r][j] < bound[r])) {
                const float sc = greedy[r] ? lv[j] : FS_FMA(lv[j], inv_tau[r], fs_gumbel_from_bits(c[r].v[j]));
                if (fs_better(sc, (int)(v + j), best[r], bi[r])) {
                  best[r] = sc;
                  bi[r] = (int)(v + j);
                }
              }
            }
          }
        } else {
#pragma unroll
          for (int r = 0; r < FS_EPI_R; ++r) {
            const float lv[4] = {l4[r].x, l4[r].y, l4[r].z, l4[r].w};
#pragma unroll
            for (int j = 0; j < 4; ++j)
              if (in && greedy[r] && valid[r] && v + j < p.vocab && fs_better(lv[j], (int)(v + j), best[r], bi[r])) {
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
