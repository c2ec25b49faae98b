// epilogue.cuh: Gumbel-max over one (T_N x T_V) tile of fp32 logits staged in
// shared memory. A group of lanes takes one batch row; each lane takes noise
// groups of 16 consecutive vocabulary indices (gumbel_race.cuh), keeps a
// running (score, index) and the lanes of the row reduce them. Folds the
// tile's winner per (row, sample) into p.best (atomic max of packed
// candidates, so the order of tiles cannot change the result).
//
// Exact pruning (docs/rng.md section 6): the noise of a value is only computed
// exactly (three ~20-operation logs) when the value may still win. A value may
// win unless an upper bound on its score is below a lower bound on the row's
// final best score. Upper bounds: FS_NOISE_MAX (then not even Philox runs),
// the group's lead noise through the word test (one Philox call per group),
// and the interval fs_token_gumbel_approx +- fs_score_margin (SFU logs); lower
// bounds: the best candidate any tile has folded into p.best so far, and the
// largest interval low end among the row's values seen so far.
// Needs FS_TV, FS_TN, FS_THREADS, FS_LDL (row stride of the staged tile);
// FS_EPI_N (default FS_TN) is the number of batch rows staged per call;
// FS_EPI_WARPS (default all) the warps that share it, `warp` being 0.. of them.
#pragma once
#include "fs_params.cuh"
#include "philox.cuh"
#include "gumbel_race.cuh"
#include "gumbel_bound.cuh"
#include "noise_skip.cuh"

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

// Work split: the LPR lanes of a row group take one noise group of 16
// consecutive values each (gumbel_race.cuh) of one batch row per step, so a
// warp covers 32 / LPR rows at a time. A lane reads its group's four float4
// in an order rotated by (lane / 2) % 4, so the eight lanes of one shared-
// memory wavefront, 64 bytes apart, hit different banks.
#ifndef FS_EPI_WARPS
#define FS_EPI_WARPS (FS_THREADS / 32)  // warps sharing one epilogue call
#endif
#define FS_EPI_GROUPS (FS_TV / FS_GROUP_TOKENS)  // noise groups per row of the tile
static_assert(FS_TV % FS_GROUP_TOKENS == 0, "epilogue: T_V must be a multiple of 16");

// Lanes per row: the power of two (<= 32) that gives each lane at most one group per step.
__device__ constexpr int fs_epi_lanes_per_row(int groups) {
  int l = 1;
  while (l < 32 && l < groups) l *= 2;
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
  constexpr int LPR = fs_epi_lanes_per_row(FS_EPI_GROUPS);
  return warp * (32 / LPR) + (threadIdx.x & 31) / LPR;
}

// The approximate scores of values 4k .. 4k + 3 of a group whose word passed
// (vals: the group's values in the staged row, vb their first vocabulary
// index, a and lead from the group word gw). Called twice per group (interval
// low ends, then high ends) rather than holding 16 scores in registers.
__device__ __forceinline__ float4 fs_epi_approx4(const float* vals, fs_u64 seed, fs_u64 offset, fs_i64 vb, int s,
                                                 float inv_tau, float a, int lead, int k) {
  const fs_philox_ctr c = fs_noise_block(seed, offset, (fs_u64)(vb + 4 * k), (fs_u32)s);
  const float4 l4 = *reinterpret_cast<const float4*>(vals + 4 * k);
  return make_float4(__fmaf_rn(l4.x, inv_tau, fs_token_gumbel_approx(a, c.v[0], 4 * k == lead)),
                     __fmaf_rn(l4.y, inv_tau, fs_token_gumbel_approx(a, c.v[1], 4 * k + 1 == lead)),
                     __fmaf_rn(l4.z, inv_tau, fs_token_gumbel_approx(a, c.v[2], 4 * k + 2 == lead)),
                     __fmaf_rn(l4.w, inv_tau, fs_token_gumbel_approx(a, c.v[3], 4 * k + 3 == lead)));
}

// Whether values 4k .. 4k + 3 of a passed group may reach threshold thr at all:
// an approximate score below it has an exact score below the bound it came
// from (docs/rng.md section 6), so neither pass needs them.
__device__ __forceinline__ bool fs_epi_chunk_may_reach(const float* v4, float inv_tau, float mup, float thr) {
  const float4 l4 = *reinterpret_cast<const float4*>(v4);
  const float cmax = fmaxf(fmaxf(l4.x, l4.y), fmaxf(l4.z, l4.w));  // fmaxf drops NaN (never a winner)
  return !(FS_FMA(cmax, inv_tau, mup) < thr);
}

// Gumbel-max over the staged rows [n0, n0 + FS_EPI_N) x [v0, v0 + FS_TV).
// Keys of p.best are read one (row, sample) ahead of their use. A kernel that
// calls this repeatedly can chain the prefetch across calls: *chain holds the
// key of this call's first step (fs_epilogue_key(p, n0, fs_epilogue_first_row
// (warp), 0)) and on return the one of the call at next_n0 (< 0: none), so
// that L2 round trip overlaps the next staging.
//
// Per group: its largest logit lmax; greedy rows compare values only when
// lmax reaches the running winner. Sampled rows: if fma(lmax, 1/tau,
// FS_NOISE_MAX) reaches the bound, the group word (one Philox call) and the
// word test of noise_skip.cuh; a group that passes it draws its tokens'
// words, approximate score intervals (raising the bound), and exact scores
// only where an interval reaches the bound.
__device__ __forceinline__ void fs_tile_epilogue(const float* L, const fs_fused_params& p, fs_i64 v0, fs_i64 n0,
                                                 int warp = threadIdx.x >> 5, fs_u64* chain = nullptr,
                                                 fs_i64 next_n0 = -1) {
  constexpr int LPR = fs_epi_lanes_per_row(FS_EPI_GROUPS);
  constexpr int RPW = 32 / LPR;                          // rows per warp at a time
  constexpr int KMAX = (FS_EPI_GROUPS + LPR - 1) / LPR;  // groups per lane per row
  const int lane = threadIdx.x & 31, sub = lane / LPR, gl = lane % LPR;
  const int rot = (gl >> 1) & 3;
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
      for (int k = 0; k < KMAX; ++k) {
        const int g = gl + LPR * k;
        const fs_i64 vb = v0 + FS_GROUP_TOKENS * g;  // the group's first vocabulary index
        const fs_i64 left = p.vocab - vb;
        // values of the group inside the vocabulary (0: not this lane's, or not sampled)
        const int nv = (exists && valid && g < FS_EPI_GROUPS && left > 0) ? (left < 16 ? (int)left : 16) : 0;
        const float* vals = row + FS_GROUP_TOKENS * (g < FS_EPI_GROUPS ? g : 0);
        float lmax = neg_inf;  // fmaxf drops NaN (a NaN score never wins)
        if (nv) {
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            const float4 l4 = *reinterpret_cast<const float4*>(vals + 4 * ((q + rot) & 3));
            lmax = fmaxf(lmax, fmaxf(fmaxf(l4.x, l4.y), fmaxf(l4.z, l4.w)));
          }
        }
        if (greedy && nv && !(lmax < best)) {
#pragma unroll
          for (int i = 0; i < 16; ++i)
            if (i < nv && fs_better(vals[i], (int)(vb + i), best, bi)) {
              best = vals[i];
              bi = (int)(vb + i);
            }
        }
        // Every noise value is <= FS_NOISE_MAX and rounding is monotone: if
        // lmax * inv_tau + FS_NOISE_MAX is below the bound, no value of the
        // group can win or tie (values past the vocabulary in lmax only make
        // the test weaker).
        const bool need = nv && !greedy && !(FS_FMA(lmax, inv_tau, FS_NOISE_MAX) < bound);
        if (!__any_sync(0xffffffffu, need)) continue;
        const fs_u32 gw = need ? fs_group_word(seed, offset, (fs_u64)vb, (fs_u32)s) : 0u;
        const bool pass = need && gw >= fs_group_skip_word(fs_prune_threshold(bound), lmax, inv_tau);
        if (!__any_sync(0xffffffffu, pass)) continue;
        const int nok = pass ? nv : 0;  // values of this lane's group that may still win
        const float a = __fmul_rn(0.0625f, fs_exp1_approx(gw));
        const int lead = fs_group_lead(gw);
        // mup bounds every approximate noise of the group (the lead's
        // approximation plus 3 eps, as in epilogue_owner.cuh): four values
        // whose largest logit cannot reach the pruning threshold with it need
        // no Philox call in either pass.
        const float mup = __fadd_rn(__fmul_rn(-0.693147182f, fs_lg2_approx_normal(a)), 3.0f * FS_GUMBEL_APPROX_ERR);
        // Pass 1: the largest interval low end (st - m: a lower bound on that
        // value's exact score) raises the row's bound.
        float lo = neg_inf;
        if (nok) {
#pragma unroll 1
          for (int k = 0; k < 4; ++k) {
            if (4 * k >= nok || !fs_epi_chunk_may_reach(vals + 4 * k, inv_tau, mup, fs_prune_threshold(bound))) continue;
            const float4 st = fs_epi_approx4(vals, seed, offset, vb, s, inv_tau, a, lead, k);
            const float sv[4] = {st.x, st.y, st.z, st.w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
              if (4 * k + i < nok) lo = fmaxf(lo, __fadd_rn(sv[i], -fs_score_margin(sv[i])));  // fmaxf drops NaN
          }
        }
        bound = fmaxf(bound, fs_group_max<LPR>(lo));
        // Pass 2: exact scores only where the interval's high end reaches the
        // bound (or is NaN: a NaN or infinite logit); a value below it loses
        // to the value that set it.
        if (nok) {
#pragma unroll 1
          for (int k = 0; k < 4; ++k) {
            if (4 * k >= nok || !fs_epi_chunk_may_reach(vals + 4 * k, inv_tau, mup, fs_prune_threshold(bound))) continue;
            const float4 st = fs_epi_approx4(vals, seed, offset, vb, s, inv_tau, a, lead, k);
            const float sv[4] = {st.x, st.y, st.z, st.w};
#pragma unroll
            for (int i = 0; i < 4; ++i) {
              const int t = 4 * k + i;
              if (t < nok && !(__fadd_rn(sv[i], fs_score_margin(sv[i])) < bound)) {
                const fs_u32 w = fs_noise_block(seed, offset, (fs_u64)(vb + t), (fs_u32)s).v[i];
                const float sc = FS_FMA(vals[t], inv_tau, fs_token_gumbel(gw, w, t));
                if (fs_better(sc, (int)(vb + t), best, bi)) {
                  best = sc;
                  bi = (int)(vb + t);
                }
              }
            }
          }
        }
      }
      fs_group_argmax<LPR>(best, bi);
      if (gl == 0 && exists && bi != FS_NO_INDEX) fs_fold_candidate(p.best + n * p.num_samples + s, fs_pack_candidate(best, bi));
    }
  }
  if (chain) *chain = next_key;
}
