// epilogue_owner_row.cuh: one batch row as an epilogue thread owns it for a
// launch (epilogue_owner.cuh): its parameters, its running winner and bound,
// the exact score of one of its values, and the fold of its winner into
// p.best. The register epilogue (epilogue_registers.cuh) shares the exact
// score and the helpers.
#pragma once
#include "fs_params.cuh"
#include "philox_batch.cuh"
#include "gumbel_race.cuh"

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

// Word i (0..3) of a Philox output, without indexing a register array.
// SELECT: two levels of selects on the bits of i, where the default chain of
// comparisons may compile to branches (as fs_token_gumbel_approx's SELECT).
template <bool SELECT = false>
__device__ __forceinline__ fs_u32 fs_own_pick(const fs_philox_ctr& c, int i) {
  if constexpr (SELECT) {
    const fs_u32 lo = (i & 1) ? c.v[1] : c.v[0], hi = (i & 1) ? c.v[3] : c.v[2];
    return (i & 2) ? hi : lo;
  }
  return i == 0 ? c.v[0] : i == 1 ? c.v[1] : i == 2 ? c.v[2] : c.v[3];
}

// The exact score of value v (logit l) of the row: its group word and its own.
__device__ __forceinline__ float fs_own_exact_score(const fs_own_row& r, int v, float l) {
  fs_philox_ctr g[1], c[1];
  fs_philox_blocks<1>(r.key, fs_group_ctr((fs_u64)v), g);
  fs_philox_blocks<1>(r.key, (fs_u32)(v >> 2), c);
  return FS_FMA(l, r.inv_tau, fs_token_gumbel(fs_own_pick(g[0], fs_group_slot((fs_u64)v)), fs_own_pick(c[0], v & 3), v & 15));
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
    fs_fold_candidate(p.best + n * p.num_samples + s, fs_pack_candidate(r.best, r.bi));
    r.pub = r.bi;
  }
}

// Raises the row's bound to the score of a best key read from p.best (at
// once, or a tile earlier: a lower bound still, p.best only grows).
__device__ __forceinline__ void fs_own_raise_bound(fs_own_row& r, fs_u64 key) {
  if (r.live && !r.greedy) r.bound = fmaxf(r.bound, fmaxf(fs_candidate_score(key), fs_own_neg_inf()));
}
