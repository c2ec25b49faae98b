// epilogue_owner.cuh: Gumbel-max for kernels with dedicated epilogue warps
// (wgmma_coop). Every epilogue thread owns the same slice of the staged tile
// for the whole launch: row slot `slot` (rows slot, slot + SLOTS, ...) and
// segment `seg` of T_V / TPR values of each. It keeps its running winner and
// bound in registers from tile to tile; after each tile it folds a new winner
// into p.best and reads the row's best so far back as its bound (one load,
// and an atomic only when the winner changed), so a tile costs no
// row-parameter loads or shuffles: only the values.
//
// Per noise group of 16 values (sampled rows, gumbel_race.cuh): the largest
// logit, then, only if that with the largest possible noise reaches the
// row's bound, the group word (one Philox call per four groups) and the word
// test of noise_skip.cuh; only a group that passes draws its tokens' words
// (philox_batch.cuh), approximate scores and, for close contests, exact ones
// (fs_own_group below).
//
// Needs FS_TV, FS_TN, FS_LDL (row stride of the staged tile), FS_L_SWZ (true:
// the tile is stored swizzled, fs_staged_col), FS_EPI_WARPS (the warps that
// share the tile); FS_L_VMAJOR 1 when the tile is
// vocabulary-major in global memory (L[v][n]: a row's values FS_TN apart,
// FS_LDL 1; the lanes of a warp own consecutive rows, so each load of theirs
// reads whole 128-byte lines).
#pragma once
#include "fs_params.cuh"
#include "philox_batch.cuh"
#include "gumbel_race.cuh"
#include "gumbel_bound.cuh"
#include "noise_skip.cuh"
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

// Threads per row: the largest power of two with slots * t <= threads and
// at least one noise group of 16 values (gumbel_race.cuh) per thread.
__device__ constexpr int fs_own_threads_per_row(int slots, int threads, int tile_v) {
  int t = 1;
  while (2 * t * slots <= threads && 2 * t <= tile_v / FS_GROUP_TOKENS) t *= 2;
  return t;
}

struct fs_own_layout {
  static constexpr int THREADS = 32 * FS_EPI_WARPS;
  static constexpr int SLOTS = FS_TN < THREADS ? FS_TN : THREADS;  // rows at a time
  static constexpr int TPR = fs_own_threads_per_row(SLOTS, THREADS, FS_TV);
  static constexpr int RPT = (FS_TN + SLOTS - 1) / SLOTS;  // rows per thread
  static constexpr int VPS = FS_TV / TPR;                  // values per thread and row
  static constexpr int GROUPS = VPS / FS_GROUP_TOKENS;     // noise groups per thread and row
  // Groups scanned together: those whose group words one Philox call holds
  // (64 tokens), as far as the segment has them.
  static constexpr int CALL = GROUPS % 4 == 0 ? 4 : GROUPS % 2 == 0 ? 2 : 1;
};
static_assert(FS_TV % (FS_GROUP_TOKENS * fs_own_layout::TPR) == 0, "epilogue_owner: segments of whole noise groups");

// The 16 values of noise group q (column c0 + 16 q, vocabulary index v0 +
// 16 q) of this thread's segment of staged row nl (row: the row's start), nv
// of them inside the vocabulary. Their largest logit (values past the
// vocabulary included: an upper bound is all that is needed).
__device__ __forceinline__ float fs_own_group_max(const float* row, int nl, int c0) {
  float m = -__int_as_float(0x7f800000);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float4 l = fs_own_load4(row, nl, c0 + 4 * k);
    m = fmaxf(m, fmaxf(fmaxf(l.x, l.y), fmaxf(l.z, l.w)));  // fmaxf drops NaN
  }
  return m;
}

// Greedy rows: the group's values in order against the running winner.
__device__ __forceinline__ void fs_own_greedy_group(fs_own_row& r, const float* row, int nl, int c0, fs_i64 v0, int nv) {
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float4 l4 = fs_own_load4(row, nl, c0 + 4 * k);
    const float lv[4] = {l4.x, l4.y, l4.z, l4.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int v = (int)(v0 + 4 * k + i);
      if (4 * k + i < nv && fs_better(lv[i], v, r.best, r.bi)) {
        r.best = lv[i];
        r.bi = v;
      }
    }
  }
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
    const float4 l4 = fs_own_load4(row, nl, c0 + 4 * k);
    if (!pass || 4 * k >= nv || !fs_own_chunk_may_reach(l4, r.inv_tau, mup, thr0)) continue;
    const float4 st = fs_own_approx4(r, v0, l4, a, lead, k);
    const float sv[4] = {st.x, st.y, st.z, st.w};
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
    const float4 l4 = fs_own_load4(row, nl, c0 + 4 * k);
    if (!pass || 4 * k >= nv || !fs_own_chunk_may_reach(l4, r.inv_tau, mup, thr)) continue;
    const float4 st = fs_own_approx4(r, v0, l4, a, lead, k);
    const float sv[4] = {st.x, st.y, st.z, st.w};
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (4 * k + i < nv && sv[i] >= thr) surv |= 1u << (4 * k + i);
  }
  fs_own_settle(r, row, nl, c0, v0, smax, msmax, surv);
}

// FS_OWN_COOP_TAKEUP 1 (sample_logits.cuh): the warp takes up its passing
// groups together, up to two per round, one per half-warp: lane t of a half
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
#ifndef FS_OWN_COOP_TAKEUP
#define FS_OWN_COOP_TAKEUP 0
#endif
#ifndef FS_OWN_COOP_MAX
#define FS_OWN_COOP_MAX 8  // passing groups of a warp above which the serial path runs
#endif

#if FS_OWN_COOP_TAKEUP
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
#endif

// CALL noise groups q0 .. q0 + CALL - 1 of this thread's segment of staged
// row nl (row: the row's start; c0: the segment's first column, v0: its
// vocabulary index; left: its values inside the vocabulary, 0 for a dead
// row). WHOLE: every value is inside (the tail checks compile away). Every
// lane of the warp calls it (the votes below), live or not.
//
// Per group, before any token's Philox word: its largest logit lmax. Every
// noise value is <= FS_NOISE_MAX and rounding is monotone, so a group with
// fma(lmax, 1/tau, FS_NOISE_MAX) < B cannot win or tie. Otherwise the group
// word (one Philox call for four groups) bounds all 16 values' noise by the
// lead's: a word below fs_group_skip_word (noise_skip.cuh) rules the whole
// group out. Once the bound is near the row's final score that is nearly
// every group, so most values cost a shared-memory load and a max.
template <bool WHOLE>
__device__ __forceinline__ void fs_own_groups(fs_own_row& r, const float* row, int nl, int c0, fs_i64 v0, int left,
                                              int q0) {
  constexpr int CALL = fs_own_layout::CALL;
  const float neg_inf = fs_own_neg_inf();
  float lmax[CALL];
  int nv[CALL];
  bool need[CALL];
  bool any = false;
#pragma unroll
  for (int j = 0; j < CALL; ++j) {
    const int q = q0 + j;
    nv[j] = WHOLE ? FS_GROUP_TOKENS : min(max(left - FS_GROUP_TOKENS * q, 0), FS_GROUP_TOKENS);
    lmax[j] = fs_own_group_max(row, nl, c0 + FS_GROUP_TOKENS * q);
    if (r.greedy && nv[j] && !(lmax[j] < r.best))
      fs_own_greedy_group(r, row, nl, c0 + FS_GROUP_TOKENS * q, v0 + FS_GROUP_TOKENS * q, nv[j]);
    need[j] = nv[j] && !r.greedy && !(FS_FMA(lmax[j], r.inv_tau, FS_NOISE_MAX) < r.bound);
    any |= need[j];
  }
  if (!__any_sync(0xffffffffu, any)) return;
  // The group words of the CALL groups: one Philox call (64 tokens).
  const fs_i64 vq = v0 + FS_GROUP_TOKENS * q0;
  fs_philox_ctr g[1];
  fs_philox_blocks<1>(r.key, fs_group_ctr((fs_u64)vq), g);
  // Each group against its own largest logit (one ex2 each): a warp runs
  // the rare path below whenever one of its lanes passes, so a tighter test
  // pays for itself.
  const float thr = fs_prune_threshold(r.bound);
  unsigned pass = 0;  // bit j: group q0 + j passed
#pragma unroll
  for (int j = 0; j < CALL; ++j)
    if (need[j] && fs_own_pick(g[0], fs_group_slot((fs_u64)(vq + FS_GROUP_TOKENS * j))) >=
                       fs_group_skip_word(thr, lmax[j], r.inv_tau))
      pass |= 1u << j;
  if (!__any_sync(0xffffffffu, pass)) return;
#if FS_OWN_COOP_TAKEUP
  if (__reduce_add_sync(0xffffffffu, (unsigned)__popc(pass)) <= FS_OWN_COOP_MAX) {
    fs_own_coop_takeups<WHOLE>(r, row, nl, c0, v0, left, q0, g[0], pass);
    return;
  }
#endif
  // One copy of the rare path (not unrolled): the group's values, its word.
#pragma unroll 1
  for (int j = 0; j < CALL; ++j) {
    const bool pj = (pass >> j) & 1u;
    if (!__any_sync(0xffffffffu, pj)) continue;
    const int q = q0 + j;
    const int nvj = WHOLE ? FS_GROUP_TOKENS : min(max(left - FS_GROUP_TOKENS * q, 0), FS_GROUP_TOKENS);
    const fs_u32 gw = fs_own_pick(g[0], fs_group_slot((fs_u64)(vq + FS_GROUP_TOKENS * j)));
    fs_own_group(r, row, nl, c0 + FS_GROUP_TOKENS * q, v0 + FS_GROUP_TOKENS * q, nvj, gw, pj);
  }
}

// Scans this thread's VPS values of staged row nl (row: the row's start; c0:
// the first value's column, v0: its vocabulary index) CALL groups at a time.
// Every lane of the warp calls it, live or not.
__device__ __forceinline__ void fs_own_scan(fs_own_row& r, const float* row, int nl, int c0, fs_i64 v0,
                                            fs_i64 vocab) {
  constexpr int CALL = fs_own_layout::CALL;
  // Values of the segment inside the vocabulary (0 for a dead row).
  const fs_i64 left64 = vocab - v0;
  const int left = !r.live || left64 <= 0 ? 0 : left64 < fs_own_layout::VPS ? (int)left64 : fs_own_layout::VPS;
  for (int q0 = 0; q0 < fs_own_layout::GROUPS; q0 += CALL) {
    // Warp-uniform choice, so the votes inside see every lane.
    if (__all_sync(0xffffffffu, left >= FS_GROUP_TOKENS * (q0 + CALL))) fs_own_groups<true>(r, row, nl, c0, v0, left, q0);
    else fs_own_groups<false>(r, row, nl, c0, v0, left, q0);
  }
}

// The epilogue warps' state for a launch: construct once, call tile() for
// each staged tile (in the block's tile order), finish() at the end.
// FS_OWN_DEFER_REFRESH 1 (sample_logits.cuh): a single-sample launch reads
// the rows' best keys after each tile into registers and raises the bounds
// with them at the start of the next tile of the same rows, so the load's L2
// round trip overlaps that tile's copies rather than stalling the thread; and
// after its last tile (more = false) it reads none. 0 (the fused kernels):
// read and raise at once after every tile.
#ifndef FS_OWN_DEFER_REFRESH
#define FS_OWN_DEFER_REFRESH 0
#endif
#ifndef FS_OWN_WARP_FOLD
#define FS_OWN_WARP_FOLD 0  // 1: warp_flush below (sample_logits.cuh)
#endif

struct fs_own_epilogue {
  fs_own_row rows[fs_own_layout::RPT];
  fs_i64 n0 = -1;  // batch tile whose rows are held (sample 0, single-sample launches)
  int slot, seg;
#if FS_OWN_DEFER_REFRESH
  fs_u64 pending[fs_own_layout::RPT];  // best keys read after the last tile, not yet applied
  bool has_pending = false;
#endif

  __device__ __forceinline__ explicit fs_own_epilogue(int thread) {
    slot = thread % fs_own_layout::SLOTS;
    seg = thread / fs_own_layout::SLOTS;
  }
  __device__ __forceinline__ bool active() const { return seg < fs_own_layout::TPR; }

  // Row k of the thread: its index in the tile, and whether it exists.
  __device__ __forceinline__ int row_in_tile(int k) const { return slot + k * fs_own_layout::SLOTS; }
  __device__ __forceinline__ bool holds(int k, const fs_fused_params& p) const {
    return active() && n0 >= 0 && row_in_tile(k) < FS_TN && n0 + row_in_tile(k) < p.rows;
  }

  __device__ __forceinline__ void flush(const fs_fused_params& p, int s) {
#if FS_OWN_WARP_FOLD
#pragma unroll
    for (int k = 0; k < fs_own_layout::RPT; ++k) warp_flush(k, p, s, true);
#else
#pragma unroll
    for (int k = 0; k < fs_own_layout::RPT; ++k)
      if (holds(k, p)) fs_own_flush(rows[k], p, n0 + row_in_tile(k), s);
#endif
  }
#if FS_OWN_WARP_FOLD
  // FS_OWN_WARP_FOLD 1 (sample_logits.cuh: T_N <= 32 rows at a time, so the
  // lanes lane % T_N of a warp hold the same row): the lanes whose winner
  // changed since their last fold make it exact, the row's lanes reduce their
  // new winners by shuffles and the first of them folds the best one: one
  // atomic per warp and row where there were 32 / T_N (9504 on one address
  // at N = 1, V = 151936, whose queue held every block at its final fence).
  // Every lane of the warp calls it. Greedy rows only with greedy_too (they
  // fold once, at the end or when the thread moves to other rows).
  __device__ __forceinline__ void warp_flush(int k, const fs_fused_params& p, int s, bool greedy_too) {
    static_assert(fs_own_layout::SLOTS <= 32 && 32 % fs_own_layout::SLOTS == 0, "warp fold: a row's lanes in one warp");
    fs_own_row& r = rows[k];
    const bool mine = holds(k, p) && r.live && (greedy_too || !r.greedy) && r.bi != FS_NO_INDEX && r.bi != r.pub;
    if (mine) fs_own_make_exact(r);
    float best = mine ? r.best : fs_own_neg_inf();
    int bi = mine ? r.bi : FS_NO_INDEX;
#pragma unroll
    for (int m = fs_own_layout::SLOTS; m < 32; m <<= 1) {
      const float ob = __shfl_xor_sync(0xffffffffu, best, m);
      const int oi = __shfl_xor_sync(0xffffffffu, bi, m);
      if (fs_better(ob, oi, best, bi)) {
        best = ob;
        bi = oi;
      }
    }
    if (mine) r.pub = r.bi;
    if ((threadIdx.x & 31) < fs_own_layout::SLOTS && bi != FS_NO_INDEX)
      fs_fold_candidate(p.best + (n0 + row_in_tile(k)) * p.num_samples + s, fs_pack_candidate(best, bi));
  }
#endif
  __device__ __forceinline__ void start_sample(const fs_fused_params& p, int s) {
#pragma unroll
    for (int k = 0; k < fs_own_layout::RPT; ++k) fs_own_start_sample(rows[k], p, n0 + row_in_tile(k), s);
  }

  // The staged tile L ([FS_TN][FS_LDL], or [FS_TV][FS_TN] with FS_L_VMAJOR; batch rows [tn0, tn0 + FS_TN) x
  // vocabulary [v0, v0 + FS_TV)). A single-sample launch keeps each row's
  // winner across tiles of the same batch rows; with several samples each
  // tile folds its winners (one running winner per row in registers).
  __device__ __forceinline__ void tile(const float* L, const fs_fused_params& p, fs_i64 v0, fs_i64 tn0,
                                      bool more = true) {
    const bool single = p.num_samples == 1;
    if (tn0 != n0) {
      if (single) flush(p, 0);
      n0 = tn0;
#pragma unroll
      for (int k = 0; k < fs_own_layout::RPT; ++k) fs_own_load_row(rows[k], p, n0 + row_in_tile(k), holds(k, p));
      if (single) start_sample(p, 0);
    }
#if FS_OWN_DEFER_REFRESH
    else if (has_pending) {
#pragma unroll
      for (int k = 0; k < fs_own_layout::RPT; ++k)
        if (holds(k, p) && !rows[k].greedy) fs_own_raise_bound(rows[k], pending[k]);
    }
    has_pending = false;
#endif
    for (int s = 0; s < p.num_samples; ++s) {
      if (!single) start_sample(p, s);
#pragma unroll
      for (int k = 0; k < fs_own_layout::RPT; ++k) {
        const int nl = row_in_tile(k) < FS_TN ? row_in_tile(k) : 0;
        const int sg = active() ? seg : 0;
        fs_own_scan(rows[k], L + nl * FS_LDL, nl, sg * fs_own_layout::VPS, v0 + sg * fs_own_layout::VPS, p.vocab);
      }
      if (!single) flush(p, s);
    }
    // Single sample: share the winners between blocks after every tile (fold
    // each new winner, read back the row's best so far), so every block's
    // bound approaches the row's final score after the first tiles and the
    // word test (noise_skip.cuh) rules out nearly every value.
    // Greedy rows (no noise, nothing to rule out) fold once at the end.
    if (single) {
#pragma unroll
      for (int k = 0; k < fs_own_layout::RPT; ++k) {
#if FS_OWN_WARP_FOLD
        warp_flush(k, p, 0, false);  // every lane (its shuffles)
#endif
        if (holds(k, p) && !rows[k].greedy) {
#if !FS_OWN_WARP_FOLD
          fs_own_flush(rows[k], p, n0 + row_in_tile(k), 0);
#endif
#if FS_OWN_DEFER_REFRESH
          if (more) pending[k] = __ldcg(p.best + (n0 + row_in_tile(k)) * p.num_samples);
#else
          fs_own_refresh_bound(rows[k], p, n0 + row_in_tile(k), 0);
#endif
        }
      }
#if FS_OWN_DEFER_REFRESH
      has_pending = more;
#endif
    }
    (void)more;
  }

  __device__ __forceinline__ void finish(const fs_fused_params& p) {
    if (p.num_samples == 1) flush(p, 0);
  }
};
