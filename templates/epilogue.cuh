// epilogue.cuh: Gumbel-max over one (T_N x T_V) tile of fp32 logits staged in
// shared memory. A group of lanes takes one batch row; each lane takes groups
// of four consecutive vocabulary indices (one Philox call per group and row),
// keeps a running (score, index) and the lanes of the row reduce them. Folds the tile's winner per (row, sample) into p.best (atomic max of
// packed candidates, so the order of tiles cannot change the result).
//
// Exact pruning (docs/rng.md section 6): the noise of a value is only computed
// exactly (two ~20-operation logs) when the value may still win. A value may
// win unless an upper bound on its score is below a lower bound on the row's
// final best score. Bounds: FS_GUMBEL_MAX (then not even Philox runs), and the
// interval fs_gumbel_approx +- fs_score_margin (two SFU logs); lower bounds:
// the best candidate any tile has folded into p.best so far, and the largest
// interval low end among the row's values seen so far.
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

// Work split: the LPR lanes of a row group take FS_EPI_G groups of four
// consecutive values each of one batch row (so a warp covers 32 / LPR rows
// at a time); the G groups' Philox and log chains are independent, which
// hides their latency, and the per-row costs (its parameters, the bound, the
// reductions, one atomic) are shared by 4 G values per lane. G is as large as
// the call's work allows, at most FS_EPI_G_MAX (kernels whose accumulators
// stay live across the epilogue lower it to save registers).
#ifndef FS_EPI_WARPS
#define FS_EPI_WARPS (FS_THREADS / 32)  // warps sharing one epilogue call
#endif
#ifndef FS_EPI_G_MAX
#define FS_EPI_G_MAX 4
#endif
#define FS_EPI_GROUPS (FS_TV / 4)  // groups of four values per row of the tile
#ifndef FS_EPI_G
#define FS_EPI_G                                                                                                  \
  (FS_EPI_N * FS_EPI_GROUPS >= 4 * 32 * FS_EPI_WARPS && FS_EPI_G_MAX >= 4   ? 4                                   \
   : FS_EPI_N * FS_EPI_GROUPS >= 2 * 32 * FS_EPI_WARPS && FS_EPI_G_MAX >= 2 ? 2                                   \
                                                                           : 1)
#endif

// Lanes per row: the power of two (<= 32) that gives each lane at most G groups.
__device__ constexpr int fs_epi_lanes_per_row(int groups, int g) {
  int l = 1;
  while (l < 32 && l * g < groups) l *= 2;
  return l;
}

// Max of x over the `lanes` lanes (a power of two) of this lane's aligned group.
template <int LANES>
__device__ __forceinline__ float fs_group_max(float x) {
#pragma unroll
  for (int m = LANES / 2; m > 0; m >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, m));
  return x;
}
template <int LANES>
__device__ __forceinline__ void fs_group_argmax(float& best, int& bi) {
#pragma unroll
  for (int m = LANES / 2; m > 0; m >>= 1) {
    const float os = __shfl_xor_sync(0xffffffffu, best, m);
    const int oi = __shfl_xor_sync(0xffffffffu, bi, m);
    if (fs_better(os, oi, best, bi)) { best = os; bi = oi; }
  }
}

// The lane's row within a call's first step and the key prefetch for it:
// the best key so far of (row nl of the call at n0, sample s), or 0 where the
// row does not exist or needs no bound (greedy or invalid temperature).
__device__ __forceinline__ fs_u64 fs_epilogue_key(const fs_fused_params& p, fs_i64 n0, int nl, int s) {
  if (n0 < 0 || nl >= FS_EPI_N || n0 + nl >= p.rows) return 0;
  const float tau = fs_row_temperature(p.row, n0 + nl);
  if (tau == 0.0f || !fs_temperature_valid(tau)) return 0;
  return fs_best_key_so_far(p, n0 + nl, s);
}
__device__ __forceinline__ int fs_epilogue_first_row(int warp) {
  constexpr int LPR = fs_epi_lanes_per_row(FS_EPI_GROUPS, FS_EPI_G);
  return warp * (32 / LPR) + (threadIdx.x & 31) / LPR;
}

// Gumbel-max over the staged rows [n0, n0 + FS_EPI_N) x [v0, v0 + FS_TV).
// Keys of p.best are read one (row, sample) ahead of their use. A kernel that
// calls this repeatedly can chain the prefetch across calls: *chain holds the
// key of this call's first step (fs_epilogue_key(p, n0, fs_epilogue_first_row
// (warp), 0)) and on return the one of the call at next_n0 (< 0: none), so
// that L2 round trip overlaps the next staging.
__device__ __forceinline__ void fs_tile_epilogue(const float* L, const fs_fused_params& p, fs_i64 v0, fs_i64 n0,
                                                 int warp = threadIdx.x >> 5, fs_u64* chain = nullptr,
                                                 fs_i64 next_n0 = -1) {
  constexpr int LPR = fs_epi_lanes_per_row(FS_EPI_GROUPS, FS_EPI_G);
  constexpr int RPW = 32 / LPR;                          // rows per warp at a time
  constexpr int KMAX = (FS_EPI_GROUPS + LPR - 1) / LPR;  // groups per lane per row
  const int lane = threadIdx.x & 31, sub = lane / LPR, gl = lane % LPR;
  const float neg_inf = -__int_as_float(0x7f800000);
  fs_u64 next_key = chain ? *chain : fs_epilogue_key(p, n0, warp * RPW + sub, 0);
  for (int nb = warp * RPW; nb < FS_EPI_N; nb += FS_EPI_WARPS * RPW) {
    const int nl = nb + sub;
    const fs_i64 n = n0 + nl;
    const bool exists = nl < FS_EPI_N && n < p.rows;
    const float tau = exists ? fs_row_temperature(p.row, n) : -1.0f;
    const bool greedy = (tau == 0.0f), valid = fs_temperature_valid(tau);
    const float inv_tau = (greedy || !valid) ? 1.0f : 1.0f / tau;
    const fs_u64 seed = exists ? fs_row_seed(p.row, n) : 0, offset = exists ? fs_row_offset(p.row, n) : 0;
    const float* row = L + (nl < FS_EPI_N ? nl : 0) * FS_LDL;
    for (int s = 0; s < p.num_samples; ++s) {
      const fs_u64 key = next_key;
      next_key = s + 1 < p.num_samples                  ? fs_epilogue_key(p, n0, nl, s + 1)
                 : nl + FS_EPI_WARPS * RPW < FS_EPI_N ? fs_epilogue_key(p, n0, nl + FS_EPI_WARPS * RPW, 0)
                                                        : fs_epilogue_key(p, next_n0, warp * RPW + sub, 0);
      // bound: a lower bound on the row's final best score, the same in all its lanes.
      float bound = (exists && valid) ? fs_bound_from_key(key) : neg_inf;
      float best = neg_inf;
      int bi = FS_NO_INDEX;
      for (int k0 = 0; k0 < KMAX; k0 += FS_EPI_G) {
        float4 l4[FS_EPI_G];
        int nv[FS_EPI_G];    // values of group j inside the vocabulary (0..4; 0: not this lane's or not sampled)
        bool noise = false;  // some value of this lane could still win with noise
#pragma unroll
        for (int j = 0; j < FS_EPI_G; ++j) {
          const int g = gl + LPR * (k0 + j);
          const fs_i64 left = p.vocab - (v0 + 4 * g);
          nv[j] = (exists && valid && k0 + j < KMAX && g < FS_EPI_GROUPS && left > 0) ? (left < 4 ? (int)left : 4) : 0;
          l4[j] = nv[j] ? *reinterpret_cast<const float4*>(row + 4 * g) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
          // Every noise value is <= FS_GUMBEL_MAX and rounding is monotone:
          // if l * inv_tau + FS_GUMBEL_MAX is below the bound for every l of
          // the group, none of the four can win or tie. fmaxf drops NaN (a
          // NaN score never wins); greedy rows need no noise.
          const float lmax = fmaxf(fmaxf(l4[j].x, l4[j].y), fmaxf(l4[j].z, l4[j].w));
          noise |= nv[j] && !greedy && !(FS_FMA(lmax, inv_tau, FS_GUMBEL_MAX) < bound);
        }
        if (__any_sync(0xffffffffu, noise)) {
          // Pass 1: Philox for every group (also of greedy rows or groups
          // with nothing to win, then ignored, so the chains stay branch-free
          // and interleave), approximate scores, their intervals' low ends.
          fs_philox_ctr c[FS_EPI_G];
          float hi[FS_EPI_G][4];  // interval high ends
          unsigned ok = 0;        // bit 4j+i: value i of group j is a candidate at all
          float lo = neg_inf;
#pragma unroll
          for (int j = 0; j < FS_EPI_G; ++j) {
            const fs_i64 v = v0 + 4 * (gl + LPR * (k0 + j));
            c[j] = fs_noise_block(seed, offset, (fs_u64)v, (fs_u32)s);
            const float lv[4] = {l4[j].x, l4[j].y, l4[j].z, l4[j].w};
#pragma unroll
            for (int i = 0; i < 4; ++i) {
              const float st = greedy ? lv[i] : __fmaf_rn(lv[i], inv_tau, fs_gumbel_approx(c[j].v[i]));
              const float m = greedy ? 0.0f : fs_score_margin(st);
              hi[j][i] = __fadd_rn(st, m);  // NaN (from a NaN or infinite logit) never compares below
              if (i < nv[j]) {
                ok |= 1u << (4 * j + i);
                lo = fmaxf(lo, __fadd_rn(st, -m));  // fmaxf drops NaN
              }
            }
          }
          bound = fmaxf(bound, fs_group_max<LPR>(lo));
          // Pass 2: exact scores only where the interval reaches the bound
          // (or is NaN); a value below it loses to the value that set it.
#pragma unroll
          for (int j = 0; j < FS_EPI_G; ++j) {
            const fs_i64 v = v0 + 4 * (gl + LPR * (k0 + j));
            const float lv[4] = {l4[j].x, l4[j].y, l4[j].z, l4[j].w};
#pragma unroll
            for (int i = 0; i < 4; ++i) {
              if (((ok >> (4 * j + i)) & 1u) && !(hi[j][i] < bound)) {
                const float sc = greedy ? lv[i] : FS_FMA(lv[i], inv_tau, fs_gumbel_from_bits(c[j].v[i]));
                if (fs_better(sc, (int)(v + i), best, bi)) {
                  best = sc;
                  bi = (int)(v + i);
                }
              }
            }
          }
        } else if (greedy) {
#pragma unroll
          for (int j = 0; j < FS_EPI_G; ++j) {
            const fs_i64 v = v0 + 4 * (gl + LPR * (k0 + j));
            const float lv[4] = {l4[j].x, l4[j].y, l4[j].z, l4[j].w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
              if (i < nv[j] && fs_better(lv[i], (int)(v + i), best, bi)) {
                best = lv[i];
                bi = (int)(v + i);
              }
          }
        }
      }
      fs_group_argmax<LPR>(best, bi);
      if (gl == 0 && exists && bi != FS_NO_INDEX) atomicMax(p.best + n * p.num_samples + s, fs_pack_candidate(best, bi));
    }
  }
  if (chain) *chain = next_key;
}
