// race_scores.cuh: what both epilogues (epilogue.cuh, epilogue_owner.cuh)
// compute for a noise group whose group word passed the word test
// (gumbel_race.cuh, docs/rng.md section 6): the group's approximate race
// constants, the bound that lets four values skip their Philox call, their
// approximate scores, and a value's exact score. Words come from the row's
// precomputed Philox constants (philox_batch.cuh), set up once per (row,
// sample).
#pragma once
#include "philox_batch.cuh"
#include "gumbel_race.cuh"
#include "gumbel_bound.cuh"

// A passed group: a~ = E~(u_G) / 16, its lead, and mup, which bounds every
// approximate noise of the group: every token's exact noise is at most the
// lead's, whose approximation -log(a~) is within eps of it, and a token's
// approximate noise is within eps of its exact one (the third eps covers the
// roundings).
struct fs_race_group {
  float a;
  float mup;
  int lead;
};

__device__ __forceinline__ fs_race_group fs_race_group_of(fs_u32 group_word) {
  fs_race_group g;
  g.a = __fmul_rn(0.0625f, fs_exp1_approx(group_word));
  g.mup = __fadd_rn(__fmul_rn(-0.693147182f, fs_lg2_approx_normal(g.a)), 3.0f * FS_GUMBEL_APPROX_ERR);
  g.lead = fs_group_lead(group_word);
  return g;
}

// Whether four values (logits l4) may reach the threshold thr at all: if
// the largest cannot with mup, none of their approximate scores can (fma
// rounding is monotone), and their Philox call is not made.
__device__ __forceinline__ bool fs_race_chunk_may_reach(float4 l4, float inv_tau, float mup, float thr) {
  const float cmax = fmaxf(fmaxf(l4.x, l4.y), fmaxf(l4.z, l4.w));  // fmaxf drops NaN (never a winner)
  return !(FS_FMA(cmax, inv_tau, mup) < thr);
}

// Approximate scores of values 4k .. 4k + 3 (logits l4) of the group whose
// first vocabulary index is v0.
__device__ __forceinline__ float4 fs_race_approx4(const fs_philox_row& key, fs_i64 v0, float4 l4, float inv_tau,
                                                  const fs_race_group& g, int k) {
  fs_philox_ctr c[1];
  fs_philox_blocks<1>(key, (fs_u32)(v0 >> 2) + (fs_u32)k, c);
  return make_float4(__fmaf_rn(l4.x, inv_tau, fs_token_gumbel_approx(g.a, c[0].v[0], 4 * k == g.lead)),
                     __fmaf_rn(l4.y, inv_tau, fs_token_gumbel_approx(g.a, c[0].v[1], 4 * k + 1 == g.lead)),
                     __fmaf_rn(l4.z, inv_tau, fs_token_gumbel_approx(g.a, c[0].v[2], 4 * k + 2 == g.lead)),
                     __fmaf_rn(l4.w, inv_tau, fs_token_gumbel_approx(g.a, c[0].v[3], 4 * k + 3 == g.lead)));
}

// The group word of the group starting at vocabulary index v0.
__device__ __forceinline__ fs_u32 fs_race_group_word(const fs_philox_row& key, fs_i64 v0) {
  fs_philox_ctr c[1];
  fs_philox_blocks<1>(key, fs_group_ctr((fs_u64)v0), c);
  return fs_ctr_word(c[0], fs_group_slot((fs_u64)v0));
}

// The exact score of value v (logit l): its group word and its own word.
__device__ __forceinline__ float fs_race_exact_score(const fs_philox_row& key, int v, float l, float inv_tau) {
  fs_philox_ctr c[1];
  fs_philox_blocks<1>(key, (fs_u32)(v >> 2), c);
  return FS_FMA(l, inv_tau, fs_token_gumbel(fs_race_group_word(key, v), fs_ctr_word(c[0], v & 3), v & 15));
}
