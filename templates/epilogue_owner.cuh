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
// (fs_own_group and fs_own_coop_takeups, epilogue_owner_takeup.cuh).
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
#include "epilogue_owner_takeup.cuh"  // the rare path: a passing group taken up

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
  if (__reduce_add_sync(0xffffffffu, (unsigned)__popc(pass)) <= FS_OWN_COOP_MAX) {
    fs_own_coop_takeups<WHOLE>(r, row, nl, c0, v0, left, q0, g[0], pass);
    return;
  }
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
// A single-sample launch reads the rows' best keys after each tile into
// registers and raises the bounds with them at the start of the next tile of
// the same rows, so the load's L2 round trip overlaps the wait for that tile
// (sample_logits: its copies) rather than stalling the thread; after its last
// tile (more = false) it reads none. The fused kernels read and raised at
// once after every tile until session 64 (0.3-1 % slower at the small
// shape's N = 16-64 together with the serial take-up, BENCHMARKS.md).
#ifndef FS_OWN_WARP_FOLD
#define FS_OWN_WARP_FOLD 0  // 1: warp_flush below (sample_logits.cuh)
#endif

struct fs_own_epilogue {
  fs_own_row rows[fs_own_layout::RPT];
  fs_i64 n0 = -1;  // batch tile whose rows are held (sample 0, single-sample launches)
  int slot, seg;
  fs_u64 pending[fs_own_layout::RPT];  // best keys read after the last tile, not yet applied
  bool has_pending = false;

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
    else if (has_pending) {
#pragma unroll
      for (int k = 0; k < fs_own_layout::RPT; ++k)
        if (holds(k, p) && !rows[k].greedy) fs_own_raise_bound(rows[k], pending[k]);
    }
    has_pending = false;
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
          if (more) pending[k] = __ldcg(p.best + (n0 + row_in_tile(k)) * p.num_samples);
        }
      }
      has_pending = more;
    }
  }

  __device__ __forceinline__ void finish(const fs_fused_params& p) {
    if (p.num_samples == 1) flush(p, 0);
  }
};
