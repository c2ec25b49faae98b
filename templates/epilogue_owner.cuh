// epilogue_owner.cuh: Gumbel-max for kernels with dedicated epilogue warps
// (wgmma_coop). Every epilogue thread owns the same slice of the staged tile
// for the whole launch: row slot `slot` (rows slot, slot + SLOTS, ...) and
// segment `seg` of T_V / TPR values of each. It keeps its running winner and
// bound in registers from tile to tile; after each tile it folds a new winner
// into p.best and reads the row's best so far back as its bound (one load,
// and an atomic only when the winner changed), so a tile costs no
// row-parameter loads or shuffles: only the values.
//
// Per value (sampled rows): Philox in batches of G groups of four
// (philox_batch.cuh), the approximate noise (gumbel_bound.cuh) and its score
// st. The batch's largest st raises the bound B (st - margin is a lower
// bound on that value's exact score); only values with st >=
// fs_prune_threshold(B) can win or tie (docs/rng.md section 6), and before
// any st is computed, a batch whose words are all below the skip word of
// noise_skip.cuh has none that can. Exact noise
// is computed lazily: a lone survivor whose score interval lies wholly above
// (or below) the running winner's replaces it (or is dropped) without it; the
// exact score is computed for close contests (overlapping intervals, several
// survivors) and once for the winner when it is folded into p.best.
//
// Needs FS_TV, FS_TN, FS_LDL (row stride of the staged tile), FS_L_SWZ (true:
// the tile is stored swizzled, fs_staged_col), FS_EPI_WARPS (the warps that
// share the tile) and FS_EPI_G_MAX; FS_L_VMAJOR 1 when the tile is
// vocabulary-major in global memory (L[v][n]: a row's values FS_TN apart,
// FS_LDL 1; the lanes of a warp own consecutive rows, so each load of theirs
// reads whole 128-byte lines).
#pragma once
#include "fs_params.cuh"
#include "philox_batch.cuh"
#include "gumbel.cuh"
#include "gumbel_bound.cuh"
#include "noise_skip.cuh"
#include "wgmma_ops.cuh"

#ifndef FS_EPI_G_MAX
#define FS_EPI_G_MAX 4
#endif
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
// at least one group of four values per thread.
__device__ constexpr int fs_own_threads_per_row(int slots, int threads, int tile_v) {
  int t = 1;
  while (2 * t * slots <= threads && 2 * t <= tile_v / 4) t *= 2;
  return t;
}

struct fs_own_layout {
  static constexpr int THREADS = 32 * FS_EPI_WARPS;
  static constexpr int SLOTS = FS_TN < THREADS ? FS_TN : THREADS;  // rows at a time
  static constexpr int TPR = fs_own_threads_per_row(SLOTS, THREADS, FS_TV);
  static constexpr int RPT = (FS_TN + SLOTS - 1) / SLOTS;  // rows per thread
  static constexpr int VPS = FS_TV / TPR;                  // values per thread and row
  static constexpr int GROUPS = VPS / 4;
  static constexpr int G = GROUPS % 4 == 0 && FS_EPI_G_MAX >= 4 ? 4 : GROUPS % 2 == 0 && FS_EPI_G_MAX >= 2 ? 2 : 1;
};
static_assert(FS_TV % (4 * fs_own_layout::TPR) == 0, "epilogue_owner: segments of whole groups of four");

// One owned row of the thread: its parameters and running winner. The winner
// (best, bi) is kept lazily: while `exact` is false, best is the winner's
// approximate score st and its exact score lies in [st - m(st), st + m(st)]
// (fs_score_margin); bl is its logit, so the exact score can be computed when
// needed (a close contest, or the fold into p.best).
struct fs_own_row {
  fs_philox_row key;  // noise constants of (seed, offset, sample)
  float inv_tau;
  float best;  // running winner's score (exact, or approximate: see above)
  float bl;    // its logit
  int bi;      // its index (FS_NO_INDEX: none yet)
  int pub;     // the index last folded into p.best (FS_NO_INDEX: none)
  float bound; // lower bound on the row's final best score
  bool exact;
  bool live;  // row exists and its temperature is valid
  bool greedy;
};

__device__ __forceinline__ float fs_own_neg_inf() { return -__int_as_float(0x7f800000); }

// Row n's parameters (once per batch tile the thread holds).
__device__ __forceinline__ void fs_own_load_row(fs_own_row& r, const fs_fused_params& p, fs_i64 n, bool exists) {
  const float tau = exists ? fs_row_temperature(p.row, n) : -1.0f;
  r.greedy = tau == 0.0f;
  r.live = exists && fs_temperature_valid(tau);
  r.inv_tau = (r.live && !r.greedy) ? 1.0f / tau : 1.0f;
}

// Starts sample s of row n: its noise constants, no winner, the bound from
// what other tiles have folded in so far.
__device__ __forceinline__ void fs_own_start_sample(fs_own_row& r, const fs_fused_params& p, fs_i64 n, int s) {
  r.best = fs_own_neg_inf();
  r.bl = 0.0f;
  r.bi = FS_NO_INDEX;
  r.pub = FS_NO_INDEX;
  r.exact = true;
  r.bound = fs_own_neg_inf();
  r.key = fs_philox_row{};
  if (r.live && !r.greedy) {
    r.key = fs_philox_row_init(fs_row_seed(p.row, n), fs_row_offset(p.row, n), (fs_u32)s);
    r.bound = fmaxf(fs_candidate_score(__ldcg(p.best + n * p.num_samples + s)), fs_own_neg_inf());
  }
}

// The exact score of value v (logit l) of the row.
__device__ __forceinline__ float fs_own_exact_score(const fs_own_row& r, int v, float l) {
  fs_philox_ctr c[1];
  fs_philox_blocks<1>(r.key, (fs_u32)(v >> 2), c);
  const int i = v & 3;
  const fs_u32 w = i == 0 ? c[0].v[0] : i == 1 ? c[0].v[1] : i == 2 ? c[0].v[2] : c[0].v[3];
  return FS_FMA(l, r.inv_tau, fs_gumbel_from_bits(w));
}
__device__ __forceinline__ void fs_own_make_exact(fs_own_row& r) {
  if (!r.exact) {
    r.best = fs_own_exact_score(r, r.bi, r.bl);
    r.exact = true;
  }
}

// Folds the row's winner into p.best (exact score) unless it was folded already.
__device__ __forceinline__ void fs_own_flush(fs_own_row& r, const fs_fused_params& p, fs_i64 n, int s) {
  if (r.live && r.bi != FS_NO_INDEX && r.bi != r.pub) {
    fs_own_make_exact(r);
    atomicMax(p.best + n * p.num_samples + s, fs_pack_candidate(r.best, r.bi));
    r.pub = r.bi;
  }
}

// Raises the row's bound to the best score any block has folded so far.
__device__ __forceinline__ void fs_own_refresh_bound(fs_own_row& r, const fs_fused_params& p, fs_i64 n, int s) {
  if (r.live && !r.greedy)
    r.bound = fmaxf(r.bound, fmaxf(fs_candidate_score(__ldcg(p.best + n * p.num_samples + s)), fs_own_neg_inf()));
}

// One batch of G groups of four values (groups k0 .. k0 + G - 1) of this
// thread's segment of staged row nl (row: the row's start; c0: the segment's
// first column, v0: its vocabulary index; left: its values inside the
// vocabulary, 0 for a dead row). WHOLE: every value of the batch is inside
// (the common case: the tail checks compile away). Every lane of the warp
// calls it (the votes below), live or not.
template <bool WHOLE>
__device__ __forceinline__ void fs_own_batch(fs_own_row& r, const float* row, int nl, int c0, fs_i64 v0, int left,
                                             int k0) {
  constexpr int G = fs_own_layout::G;
  const float neg_inf = fs_own_neg_inf();
  float4 l4[G];
  int nv[G];  // values of group j inside the vocabulary
  bool need = false;
  float bmax = neg_inf;  // the batch's largest logit (NaN dropped)
#pragma unroll
  for (int j = 0; j < G; ++j) {
    nv[j] = WHOLE ? 4 : min(max(left - 4 * (k0 + j), 0), 4);
    l4[j] = fs_own_load4(row, nl, c0 + 4 * (k0 + j));
    // Every noise value is <= FS_GUMBEL_MAX and rounding is monotone: if
    // even the group's largest logit cannot reach B with it, no value of
    // the group can win or tie. fmaxf drops NaN (a NaN score never wins).
    const float lmax = fmaxf(fmaxf(l4[j].x, l4[j].y), fmaxf(l4[j].z, l4[j].w));
    need |= nv[j] && !r.greedy && !(FS_FMA(lmax, r.inv_tau, FS_GUMBEL_MAX) < r.bound);
    bmax = fmaxf(bmax, lmax);
  }
  if (r.greedy) {
#pragma unroll
    for (int j = 0; j < G; ++j) {
      const float lv[4] = {l4[j].x, l4[j].y, l4[j].z, l4[j].w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int v = (int)(v0 + 4 * (k0 + j) + i);
        if (i < nv[j] && fs_better(lv[i], v, r.best, r.bi)) {
          r.best = lv[i];
          r.bi = v;
        }
      }
    }
  }
  if (!__any_sync(0xffffffffu, need)) return;
  const fs_u32 x0 = (fs_u32)((v0 >> 2) + k0);
  fs_philox_ctr c[G];
  fs_philox_blocks<G>(r.key, x0, c);
  // A word below the skip word cannot lift any of the batch's values to the
  // threshold (noise_skip.cuh): if no lane has a word at or above its own,
  // the batch has no survivor and needs no noise approximation.
  {
    const fs_u32 skip = fs_noise_skip_word(fs_prune_threshold(r.bound), bmax, r.inv_tau);
    bool pass = false;
#pragma unroll
    for (int j = 0; j < G; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) pass |= i < nv[j] && c[j].v[i] >= skip;
    if (!__any_sync(0xffffffffu, need && pass)) return;
  }
  float st[G][4];
  float smax = neg_inf;
#pragma unroll
  for (int j = 0; j < G; ++j) {
    const float lv[4] = {l4[j].x, l4[j].y, l4[j].z, l4[j].w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      st[j][i] = __fmaf_rn(lv[i], r.inv_tau, fs_gumbel_approx(c[j].v[i]));
      if (need && i < nv[j]) smax = fmaxf(smax, st[j][i]);  // fmaxf drops NaN
    }
  }
  // smax - m(smax) is a lower bound on that value's exact score (NaN for an
  // infinite smax, dropped by fmaxf).
  const float msmax = fs_score_margin(smax);
  r.bound = fmaxf(r.bound, __fadd_rn(smax, -msmax));
  const float thr = fs_prune_threshold(r.bound);
  // Values that may win or tie. A NaN st comes from a NaN logit, whose
  // score never wins: it is not one.
  unsigned surv = 0;
#pragma unroll
  for (int j = 0; j < G; ++j)
#pragma unroll
    for (int i = 0; i < 4; ++i)
      if (need && i < nv[j] && st[j][i] >= thr) surv |= 1u << (4 * j + i);
  if (!surv) return;
  if ((surv & (surv - 1)) == 0) {
    // One survivor: the value with the largest st (every value with a
    // larger st would survive too). Compare intervals with the winner.
    const int b = __ffs(surv) - 1;
    const int v = (int)(v0 + 4 * k0 + b);
    const float lo = __fadd_rn(smax, -msmax), hi = __fadd_rn(smax, msmax);
    const float mb = r.exact ? 0.0f : fs_score_margin(r.best);
    const float best_lo = __fadd_rn(r.best, -mb), best_hi = __fadd_rn(r.best, mb);
    if (r.bi == FS_NO_INDEX || lo > best_hi) {  // strictly better (or the first)
      r.best = smax;
      r.bl = fs_own_load1(row, nl, c0 + 4 * k0 + b);
      r.bi = v;
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
    const int v = (int)(v0 + 4 * k0 + b);
    const float sc = fs_own_exact_score(r, v, fs_own_load1(row, nl, c0 + 4 * k0 + b));
    if (fs_better(sc, v, r.best, r.bi)) {
      r.best = sc;
      r.bi = v;
    }
  }
  r.bound = fmaxf(r.bound, r.best);
}

// Scans this thread's VPS values of staged row nl (row: the row's start; c0:
// the first value's column, v0: its vocabulary index) in batches of G groups.
// Every lane of the warp calls it, live or not.
__device__ __forceinline__ void fs_own_scan(fs_own_row& r, const float* row, int nl, int c0, fs_i64 v0,
                                            fs_i64 vocab) {
  constexpr int G = fs_own_layout::G;
  // Values of the segment inside the vocabulary (0 for a dead row).
  const fs_i64 left64 = vocab - v0;
  const int left = !r.live || left64 <= 0 ? 0 : left64 < fs_own_layout::VPS ? (int)left64 : fs_own_layout::VPS;
  for (int k0 = 0; k0 < fs_own_layout::GROUPS; k0 += G) {
    // Warp-uniform choice, so the votes inside see every lane.
    if (__all_sync(0xffffffffu, left >= 4 * (k0 + G))) fs_own_batch<true>(r, row, nl, c0, v0, left, k0);
    else fs_own_batch<false>(r, row, nl, c0, v0, left, k0);
  }
}

// The epilogue warps' state for a launch: construct once, call tile() for
// each staged tile (in the block's tile order), finish() at the end.
struct fs_own_epilogue {
  fs_own_row rows[fs_own_layout::RPT];
  fs_i64 n0 = -1;  // batch tile whose rows are held (sample 0, single-sample launches)
  int slot, seg;

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
#pragma unroll
    for (int k = 0; k < fs_own_layout::RPT; ++k)
      if (holds(k, p)) fs_own_flush(rows[k], p, n0 + row_in_tile(k), s);
  }
  __device__ __forceinline__ void start_sample(const fs_fused_params& p, int s) {
#pragma unroll
    for (int k = 0; k < fs_own_layout::RPT; ++k) fs_own_start_sample(rows[k], p, n0 + row_in_tile(k), s);
  }

  // The staged tile L ([FS_TN][FS_LDL], or [FS_TV][FS_TN] with FS_L_VMAJOR; batch rows [tn0, tn0 + FS_TN) x
  // vocabulary [v0, v0 + FS_TV)). A single-sample launch keeps each row's
  // winner across tiles of the same batch rows; with several samples each
  // tile folds its winners (one running winner per row in registers).
  __device__ __forceinline__ void tile(const float* L, const fs_fused_params& p, fs_i64 v0, fs_i64 tn0) {
    const bool single = p.num_samples == 1;
    if (tn0 != n0) {
      if (single) flush(p, 0);
      n0 = tn0;
#pragma unroll
      for (int k = 0; k < fs_own_layout::RPT; ++k) fs_own_load_row(rows[k], p, n0 + row_in_tile(k), holds(k, p));
      if (single) start_sample(p, 0);
    }
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
      for (int k = 0; k < fs_own_layout::RPT; ++k)
        if (holds(k, p) && !rows[k].greedy) {
          fs_own_flush(rows[k], p, n0 + row_in_tile(k), 0);
          fs_own_refresh_bound(rows[k], p, n0 + row_in_tile(k), 0);
        }
    }
  }

  __device__ __forceinline__ void finish(const fs_fused_params& p) {
    if (p.num_samples == 1) flush(p, 0);
  }
};
