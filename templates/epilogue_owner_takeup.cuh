// epilogue_owner_takeup.cuh: the owner epilogue's rare path (epilogue_owner.cuh):
// a noise group whose word passed the word test is taken up, its values'
// approximate scores made, the row's bound raised and the values that may win
// or tie settled: by the whole warp, two groups per round
// (fs_own_coop_takeups), or, where more than FS_OWN_COOP_MAX of a warp's
// groups pass at once, serially by the lane that owns each group
// (fs_own_group). Also the staged tile's loads both paths read.
//
// Needs FS_TN, FS_LDL, FS_L_SWZ (see epilogue_owner.cuh); FS_L_VMAJOR 1 when
// the tile is vocabulary-major in global memory.
#pragma once
#include "fs_params.cuh"
#include "philox_batch.cuh"
#include "gumbel_race.cuh"
#include "gumbel_bound.cuh"
#include "wgmma_ops.cuh"
#include "epilogue_owner_row.cuh"

#ifndef FS_L_VMAJOR
#define FS_L_VMAJOR 0
#endif

// Values col .. col + 3 (one value: col) of staged row nl, `row` its start.
__device__ __forceinline__ float4 fs_own_load4(const float* row, int nl, int col) {
#if FS_L_VMAJOR
  return make_float4(__ldcg(row + col * FS_TN), __ldcg(row + (col + 1) * FS_TN), __ldcg(row + (col + 2) * FS_TN),
                     __ldcg(row + (col + 3) * FS_TN));
#else
  return *reinterpret_cast<const float4*>(row + fs_staged_col<FS_L_SWZ>(nl, col));
#endif
}
__device__ __forceinline__ float fs_own_load1(const float* row, int nl, int col) {
#if FS_L_VMAJOR
  return __ldcg(row + col * FS_TN);
#else
  return row[fs_staged_col<FS_L_SWZ>(nl, col)];
#endif
}

// Approximate scores of values 4k .. 4k + 3 of the group at column c0
// (vocabulary index v0); a and lead from its group word.
__device__ __forceinline__ float4 fs_own_approx4(const fs_own_row& r, fs_i64 v0, float4 l4, float a, int lead, int k) {
  fs_philox_ctr c[1];
  fs_philox_blocks<1>(r.key, (fs_u32)(v0 >> 2) + (fs_u32)k, c);
  return make_float4(__fmaf_rn(l4.x, r.inv_tau, fs_token_gumbel_approx(a, c[0].v[0], 4 * k == lead)),
                     __fmaf_rn(l4.y, r.inv_tau, fs_token_gumbel_approx(a, c[0].v[1], 4 * k + 1 == lead)),
                     __fmaf_rn(l4.z, r.inv_tau, fs_token_gumbel_approx(a, c[0].v[2], 4 * k + 2 == lead)),
                     __fmaf_rn(l4.w, r.inv_tau, fs_token_gumbel_approx(a, c[0].v[3], 4 * k + 3 == lead)));
}

// Whether values 4k .. 4k + 3 (logits l4) may reach the threshold thr at
// all: every token's approximate noise is at most mup (the lead's plus 3 eps,
// fs_own_group), so if the largest of the four cannot reach thr with it,
// none of their approximate scores can, and their Philox call is not made.
__device__ __forceinline__ bool fs_own_chunk_may_reach(float4 l4, float inv_tau, float mup, float thr) {
  const float cmax = fmaxf(fmaxf(l4.x, l4.y), fmaxf(l4.z, l4.w));  // fmaxf drops NaN (never a survivor)
  return !(FS_FMA(cmax, inv_tau, mup) < thr);
}

// The pruning threshold of this epilogue's votes (st >= threshold):
// fs_prune_threshold of the bound, a bound of +inf (an infinite score folded
// into p.best, or this thread's own) taken as FLT_MAX, still a lower bound.
// T(+inf) is NaN, which no st reaches, so a row's other infinite scores
// would be dropped rather than tie to the lowest index (docs/rng.md section
// 6); T(FLT_MAX) is finite: every infinite st reaches it, and a finite st
// below it has an exact score below FLT_MAX < +inf.
__device__ __forceinline__ float fs_own_threshold(float bound) {
  return fs_prune_threshold(fminf(bound, 3.40282346638528859812e+38f));
}

// What a taken-up group leaves (its values' largest approximate score smax,
// msmax = fs_score_margin(smax), the values surv that may win or tie, bit b
// for column c0 + b, index v0 + b): a lone survivor whose interval lies
// wholly above (or below) the running winner's replaces it (or is dropped)
// without its exact score; a close contest or several survivors take exact
// scores, one at a time. The row's bound is raised already.
__device__ __forceinline__ void fs_own_settle(fs_own_row& r, const float* row, int nl, int c0, fs_i64 v0, float smax,
                                              float msmax, unsigned surv) {
  if (!surv) return;
  if ((surv & (surv - 1)) == 0) {
    // One survivor: the value with the largest st (every value with a
    // larger st would survive too). Compare intervals with the winner.
    const int b = __ffs(surv) - 1;
    const float lo = __fadd_rn(smax, -msmax), hi = __fadd_rn(smax, msmax);
    const float mb = r.exact ? 0.0f : fs_score_margin(r.best);
    const float best_lo = __fadd_rn(r.best, -mb), best_hi = __fadd_rn(r.best, mb);
    if (r.bi == FS_NO_INDEX || lo > best_hi) {  // strictly better (or the first)
      r.best = smax;
      r.bl = fs_own_load1(row, nl, c0 + b);
      r.bi = (int)(v0 + b);
      r.exact = false;
      return;
    }
    if (hi < best_lo) return;  // strictly worse
  }
  // A close contest (overlapping intervals) or several survivors: exact
  // scores for the winner and every survivor, one at a time.
  fs_own_make_exact(r);
  while (surv) {
    const int b = __ffs(surv) - 1;
    surv &= surv - 1;
    const int v = (int)(v0 + b);
    const float sc = fs_own_exact_score(r, v, fs_own_load1(row, nl, c0 + b));
    if (fs_better(sc, v, r.best, r.bi)) {
      r.best = sc;
      r.bi = v;
    }
  }
  r.bound = fmaxf(r.bound, r.best);
}

// Values 4k .. 4k + 3 of the group (column c0, vocabulary index v0, nv of
// them inside the vocabulary) into sv as approximate scores, unless the
// lane's group did not pass, the chunk lies past the vocabulary, or its
// logits cannot reach thr with noise mup (fs_own_chunk_may_reach): false then.
// Both passes of fs_own_group take the chunks so, against their thresholds.
__device__ __forceinline__ bool fs_own_chunk_scores(const fs_own_row& r, const float* row, int nl, int c0, fs_i64 v0,
                                                    int nv, int k, float a, int lead, float mup, float thr, bool pass,
                                                    float (&sv)[4]) {
  const float4 l4 = fs_own_load4(row, nl, c0 + 4 * k);
  if (!pass || 4 * k >= nv || !fs_own_chunk_may_reach(l4, r.inv_tau, mup, thr)) return false;
  const float4 st = fs_own_approx4(r, v0, l4, a, lead, k);
  sv[0] = st.x;
  sv[1] = st.y;
  sv[2] = st.z;
  sv[3] = st.w;
  return true;
}

// The values of one noise group whose group word passed the word test
// (pass: this lane's group did; every lane of the warp calls it). Philox for
// the 16 tokens' words, the approximate noise (gumbel_bound.cuh) and score
// st. The group's largest st raises the bound B (st - margin is a lower bound
// on that value's exact score); only values with st >= fs_own_threshold(B)
// can win or tie (docs/rng.md section 6). Exact noise is computed lazily: a
// lone survivor whose score interval lies wholly above (or below) the running
// winner's replaces it (or is dropped) without it; the exact score is
// computed for close contests (overlapping intervals, several survivors).
__device__ __forceinline__ void fs_own_group(fs_own_row& r, const float* row, int nl, int c0, fs_i64 v0, int nv,
                                             fs_u32 gw, bool pass) {
  const float neg_inf = fs_own_neg_inf();
  const float a = __fmul_rn(0.0625f, fs_exp1_approx(gw));
  const int lead = fs_group_lead(gw);
  // Every token's exact noise is at most the lead's (gumbel_race.cuh), whose
  // approximation is -log(a~) within eps; a token's approximate noise is
  // within eps of its exact one: so mup bounds every approximate noise of the
  // group (the third eps covers the roundings). Two passes over the four
  // Philox calls (the largest st, then the survivors) rather than 16 scores
  // held in registers: this path is rare; a call whose four logits cannot
  // reach the threshold with mup is not made.
  const float mup = __fadd_rn(__fmul_rn(-0.693147182f, fs_lg2_approx_normal(a)), 3.0f * FS_GUMBEL_APPROX_ERR);
  const float thr0 = fs_own_threshold(r.bound);
  float smax = neg_inf;
#pragma unroll 1
  for (int k = 0; k < 4; ++k) {
    float sv[4];
    if (!fs_own_chunk_scores(r, row, nl, c0, v0, nv, k, a, lead, mup, thr0, pass, sv)) continue;
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (4 * k + i < nv) smax = fmaxf(smax, sv[i]);  // fmaxf drops NaN
  }
  // smax - m(smax) is a lower bound on that value's exact score (NaN for an
  // infinite smax, dropped by fmaxf).
  const float msmax = fs_score_margin(smax);
  r.bound = fmaxf(r.bound, __fadd_rn(smax, -msmax));
  const float thr = fs_own_threshold(r.bound);
  // Values that may win or tie. A NaN st comes from a NaN logit, whose
  // score never wins: it is not one.
  unsigned surv = 0;
#pragma unroll 1
  for (int k = 0; k < 4; ++k) {
    float sv[4];
    if (!fs_own_chunk_scores(r, row, nl, c0, v0, nv, k, a, lead, mup, thr, pass, sv)) continue;
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (4 * k + i < nv && sv[i] >= thr) surv |= 1u << (4 * k + i);
  }
  fs_own_settle(r, row, nl, c0, v0, smax, msmax, surv);
}

// The cooperative take-up (sample_logits since session 63, the fused kernels
// since session 64): the warp takes up its passing groups together, up to two per round, one per half-warp: lane t of a half
// scores token t of its group (the group's row state, segment and word
// shuffled from the lane that owns it; one Philox call per lane), the half
// reduces the largest approximate score and votes the survivors, and the
// owning lane raises its bound and settles them (fs_own_settle, as the serial
// path). Session 62's ncu put 26 % of the logits kernel's instructions at
// N = 256 on fs_own_group, which runs 8 Philox calls and two passes with one
// lane of 32 live in about half of the warp-tiles. Many passers at once (a
// block's first tiles, before its bound has risen) keep the serial path,
// which takes every lane's group q0 + j in one lockstep pass.
// The same samples: every in-vocabulary value's st enters smax (the serial
// path skips four-value chunks that cannot reach the threshold; a larger
// smax only raises the bound to another lower bound of an exact score), and
// two groups of one lane in one round are scored against the bound from
// before the round (a lower threshold: more survivors, each settled as the
// serial path settles its own).
#ifndef FS_OWN_COOP_MAX
#define FS_OWN_COOP_MAX 8  // passing groups of a warp above which the serial path runs
#endif

// pass: bit j for this lane's group q0 + j (word in g). Every lane of the warp calls it.
template <bool WHOLE>
__device__ __forceinline__ void fs_own_coop_takeups(fs_own_row& r, const float* row, int nl, int c0, fs_i64 v0,
                                                    int left, int q0, const fs_philox_ctr& g, unsigned pass) {
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = (int)(threadIdx.x & 31), half = lane >> 4, t = lane & 15;
  const fs_i64 vq = v0 + FS_GROUP_TOKENS * q0;
  for (unsigned todo = pass;;) {
    const unsigned who = __ballot_sync(kAll, todo != 0);
    if (!who) break;
    // Round: (s0, j0) the lowest lane's lowest group; (s1, j1) the next
    // lane's lowest, else the same lane's next, else none (has1 false).
    const int s0 = __ffs(who) - 1;
    const unsigned t0 = __shfl_sync(kAll, todo, s0);
    const unsigned rest = who & (who - 1);
    const int s1 = rest ? __ffs(rest) - 1 : s0;
    const unsigned t1 = rest ? __shfl_sync(kAll, todo, s1) : t0 & (t0 - 1);
    const bool has1 = t1 != 0;
    const int j0 = __ffs(t0) - 1, j1 = has1 ? __ffs(t1) - 1 : j0;
    const int src = half ? s1 : s0, j = half ? j1 : j0;
    const bool act = half == 0 || has1;
    // The group words: each owner's pick for its own half's group.
    const fs_u32 w0 = fs_own_pick<true>(g, fs_group_slot((fs_u64)(vq + FS_GROUP_TOKENS * j0)));
    const fs_u32 w1 = fs_own_pick<true>(g, fs_group_slot((fs_u64)(vq + FS_GROUP_TOKENS * j1)));
    const fs_u32 gw0 = __shfl_sync(kAll, w0, s0), gw1 = __shfl_sync(kAll, w1, s1);
    const fs_u32 gw = half ? gw1 : gw0;
    // The owner's row state and segment.
    fs_philox_row key;
    key.k0 = __shfl_sync(kAll, r.key.k0, src);
    key.k1 = __shfl_sync(kAll, r.key.k1, src);
    key.c1 = __shfl_sync(kAll, r.key.c1, src);
    key.c2 = __shfl_sync(kAll, r.key.c2, src);
    key.c3 = __shfl_sync(kAll, r.key.c3, src);
    key.c4 = __shfl_sync(kAll, r.key.c4, src);
    const float inv_tau = __shfl_sync(kAll, r.inv_tau, src), bound = __shfl_sync(kAll, r.bound, src);
    const float* const srow = reinterpret_cast<const float*>(
        __shfl_sync(kAll, (unsigned long long)reinterpret_cast<fs_u64>(row), src));
    const int snl = __shfl_sync(kAll, nl, src), sc0 = __shfl_sync(kAll, c0, src);
    const fs_i64 sv0 = __shfl_sync(kAll, (long long)v0, src);
    const int sleft = WHOLE ? 0 : __shfl_sync(kAll, left, src);
    const int q = q0 + j;
    const int nv = WHOLE ? FS_GROUP_TOKENS : min(max(sleft - FS_GROUP_TOKENS * q, 0), FS_GROUP_TOKENS);
    const int cg = sc0 + FS_GROUP_TOKENS * q;
    const fs_i64 vg = sv0 + FS_GROUP_TOKENS * q;
    // Token t: its word (Philox block (vg + t) / 4) and approximate score.
    fs_philox_ctr c[1];
    fs_philox_blocks<1>(key, (fs_u32)(vg >> 2) + (fs_u32)(t >> 2), c);
    const float a = __fmul_rn(0.0625f, fs_exp1_approx(gw));
    const bool in = act && t < nv;
    const float l = in ? fs_own_load1(srow, snl, cg + t) : 0.0f;
    const float g_t = fs_token_gumbel_approx<true>(a, fs_own_pick<true>(c[0], t & 3), t == fs_group_lead(gw));
    const float st = in ? __fmaf_rn(l, inv_tau, g_t) : fs_own_neg_inf();
    float smax = st;  // fmaxf drops NaN (a NaN logit's score never wins)
#pragma unroll
    for (int m = 8; m >= 1; m >>= 1) smax = fmaxf(smax, __shfl_xor_sync(kAll, smax, m));
    const float msmax = fs_score_margin(smax);
    const float thr = fs_own_threshold(fmaxf(bound, __fadd_rn(smax, -msmax)));
    const unsigned votes = __ballot_sync(kAll, in && st >= thr);
    const float smax0 = __shfl_sync(kAll, smax, 0), smax1 = __shfl_sync(kAll, smax, 16);
    // The owners settle, half 0's group first (a lane's second group after its first).
    if (lane == s0) {
      const float m0 = fs_score_margin(smax0);
      r.bound = fmaxf(r.bound, __fadd_rn(smax0, -m0));
      fs_own_settle(r, row, nl, c0 + FS_GROUP_TOKENS * (q0 + j0), v0 + FS_GROUP_TOKENS * (q0 + j0), smax0, m0,
                    votes & 0xffffu);
      todo &= ~(1u << j0);
    }
    if (has1 && lane == s1) {
      const float m1 = fs_score_margin(smax1);
      r.bound = fmaxf(r.bound, __fadd_rn(smax1, -m1));
      fs_own_settle(r, row, nl, c0 + FS_GROUP_TOKENS * (q0 + j1), v0 + FS_GROUP_TOKENS * (q0 + j1), smax1, m1,
                    votes >> 16);
      todo &= ~(1u << j1);
    }
  }
}
