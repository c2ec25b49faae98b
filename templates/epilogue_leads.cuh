// epilogue_leads.cuh: the register epilogue's lead pass (epilogue_registers.cuh),
// run on a block's first tile, when no bound is known yet: every noise group's
// lead (its token with the largest noise) has an exact score from the group
// word alone, so folding each column's best lead of every block's first tile
// gives each sampled row a bound before any group is tested.
#pragma once
#include "fs_params.cuh"
#include "gumbel_race.cuh"

// The lead pass (the block's first tile, when no bound is known yet): every
// group's lead (the token with the group's largest noise, fs_group_lead; its
// noise depends on the group word alone) is a candidate whose exact score
// costs one FMA beside its noise. The lane holding a lead's logit writes it to its slot of
// lead_l ([MI][4][TN], one slot per group and column, each written by the one
// lane whose rows hold the lead; pairs of columns read one 64-bit word pair);
// thread t then scores column t's (and t + 128's) leads (fs_re_best_lead).
template <int MI, int NACC, int TN>
__device__ __forceinline__ void fs_re_put_leads(const float (&acc)[MI][NACC], const fs_u32* words, float* lead_l,
                                                int wq, int lane) {
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int j = 0; j < NACC / 4; ++j) {
      const int col = 8 * j + 2 * (lane & 3), at = (mi * 4 + wq) * TN + col;
      const uint2 w = *reinterpret_cast<const uint2*>(words + at);
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int lead = fs_group_lead(e ? w.y : w.x);  // rows lane/4 and lane/4 + 8 of the group
        if ((lead & 7) == (lane >> 2)) lead_l[at + e] = lead & 8 ? acc[mi][4 * j + e + 2] : acc[mi][4 * j + e];
      }
    }
}

// Column col's best lead over its MI x 4 groups, packed (fs_pack_candidate);
// 0 for none; words: the group words [MI][4][TN] (fs_re_make_words). PICK
// (the cooperative tile): the groups are ranked by their
// leads' approximate scores fma(l, 1/tau, G~) (gn: the approximate lead noise
// the tests use, fs_re_make_leads) and only the first gets its exact noise
// (from its word: two fs_logs). Any folded candidate is a valid bound, so a
// pick the approximation gets wrong (leads within FS_GUMBEL_APPROX_ERR of each
// other) only weakens the bound a little. Without PICK (ping-pong) every
// lead's exact score is made, as before session 49. Session 49 (H200, ncu,
// medians of 8 launches against 8): the pick takes 0.39 % (small) and 0.20 %
// (large) fewer cycles at N = 256, but ping-pong's small N = 128 1.8 % more
// (0.7-0.8 % in two earlier calls), so ping-pong keeps the old code.
template <int MI, int TN, bool PICK>
__device__ __forceinline__ fs_u64 fs_re_best_lead(const fs_u32* words, const float (&gn)[MI][4],
                                                  const float* lead_l, float inv_tau, fs_i64 v0, fs_i64 vocab,
                                                  int col) {
  if constexpr (!PICK) {
    fs_u64 best = 0;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const fs_u32 w = words[(mi * 4 + k) * TN + col];
        const fs_i64 v = v0 + 64 * mi + 16 * k + fs_group_lead(w);
        const float g = fs_token_gumbel(w, 0u, fs_group_lead(w));  // the lead's exact noise
        const float sc = FS_FMA(lead_l[(mi * 4 + k) * TN + col], inv_tau, g);
        if (v < vocab && sc == sc) {  // inside the vocabulary; a NaN score never wins
          const fs_u64 key = fs_pack_candidate(sc, (int)v);
          best = key > best ? key : best;
        }
      }
    return best;
  }
  float top = 0.0f, l_top = 0.0f;
  fs_u32 w_top = 0;
  int v_top = -1;
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const fs_u32 w = words[(mi * 4 + k) * TN + col];
      const fs_i64 v = v0 + 64 * mi + 16 * k + fs_group_lead(w);
      const float l = lead_l[(mi * 4 + k) * TN + col];
      const float st = __fmaf_rn(l, inv_tau, gn[mi][k]);
      // Inside the vocabulary; a NaN score is never picked (never wins).
      if (v < vocab && st == st && (v_top < 0 || st > top)) {
        top = st;
        l_top = l;
        w_top = w;
        v_top = (int)v;
      }
    }
  if (v_top < 0) return 0;
  const float sc = FS_FMA(l_top, inv_tau, fs_token_gumbel(w_top, 0u, fs_group_lead(w_top)));  // the exact score
  return sc == sc ? fs_pack_candidate(sc, v_top) : 0;
}

// A block reads its rows' bounds back right after folding its own first tile's
// leads: the bound is the best lead folded so far by any block, at least its own
// tile's. Until session 47 the block first counted itself and waited (up to 20 k
// cycles) until every block of the launch had counted, so that the bound was the
// best lead of the whole first wave. The lead pass and that wait took 8-17 k
// cycles of a block's first tile (phase trace, H200); without the wait N = 128
// takes 0.7-1.8 % fewer cycles and N = 256 the same (ncu, both shapes: the
// weaker first bound costs fewer cycles in take-ups than the wait did), so there
// is none: no block ever waits for another's first tile.
