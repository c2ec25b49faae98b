// epilogue_registers.cuh: Gumbel-max straight from a wgmma_coop consumer's
// accumulators (spec token "re"), no staged logits. The tile is 64 to 256
// batch columns wide, a multiple of 8 (fs_re_tile_n_ok: wgmma's N step):
// consumer thread t makes the group words of column t where that is below
// T_N and, for T_N > 128, of column t + 128 where that is below T_N
// (fs_re_cols, fs_re_owns). A batch tile fitted to the batch (the buckets'
// T_N = 160, 192, 224, and at run time the batch rounded up to 8, at least
// 64 rows: fit_batch_tile) spares the MMAs of rows past N:
// their boxes are also the copy engine's out-of-bounds fill, which is slow
// (BENCHMARKS.md, session 34).
//
// Layout of a 64-row block of m64nT_N accumulators (wgmma_ops.cuh): warp wq
// holds vocabulary rows 16 wq .. 16 wq + 15, which is exactly one noise group
// of 16 tokens (gumbel_race.cuh); lane l holds tokens l/4 and l/4 + 8 of it
// for the T_N / 4 batch columns 8 j + 2 (l % 4) + e (j < T_N / 8, e < 2). So a
// group's 16 values of column n sit in the 8 lanes of equal l % 4, two each.
//
// Per tile (after its MMAs):
//   1. per column and 64-row block, the group's largest logit: the larger of
//      a lane's two values, then a transpose-reduce over the 8 lanes (xor 4,
//      8, 16; each shuffle halves the values a lane holds: 28 shuffles for
//      128 values), which leaves each lane the maxima of ceil(T_N / 32)
//      columns (in a partial last chunk some lanes' are -inf: no column);
//   2. per sample: consumer thread t makes the group words of column t (one
//      Philox call per 64-row block: the four groups of the four warps), each
//      group's approximate lead noise G~_lead (fs_group_lead_approx: two SFU
//      logarithms; within FS_GUMBEL_APPROX_ERR of the exact noise of the
//      group's lead, which bounds the exact noise of every token of the
//      group), and reads the row's bound B, the best score folded into p.best
//      so far (a stale B is only lower: conservative), of which the tests take
//      the threshold T(B) = fs_prune_threshold(B) (fs_re_test_bound); these,
//      1/tau and the row's seed and offset go to shared memory
//      (epilogue_registers_inputs.cuh). Sample 0's rows and words are made
//      before the tile's MMAs are issued (fs_re_words_before: Philox's 64-bit
//      multiplies share a pipe with the tensor cores, sessions 55-56), its
//      lead noise and bounds while they run (fs_re_prefetch, a hook of the
//      k-loop; work there costs about its own cycles: session 23's 16 fewer
//      fs_logs per column and tile saved 0.3-0.5 % of an N = 256 launch);
//   3. each (column, group) is tested with one FMA: fma(lmax, 1/tau,
//      G~_lead) < T(B) rules the group out (fs_group_may_win; docs/rng.md
//      section 6, upper bound 1d: every token's exact score is at most
//      fma(lmax, 1/tau, G_lead), fp32 rounding being monotone (1c), and that
//      is below B when its approximation is below T(B), the threshold form's
//      proof: it can neither win nor tie); greedy rows on the logit alone
//      (lmax < B). Until session 43 the hook made the exact G_lead (two
//      fs_logs per group) and tested it against B;
//   4. rarely, a group passes: the 8 lanes holding its values (a quad; the
//      four quads of a warp in parallel) take it up, compute each value's
//      approximate score (gumbel_bound.cuh), and for those that reach
//      T(B) the exact one (the group word from shared
//      memory; the row's seed and offset from shared memory too: a global
//      load per group taken up cost each round an L2 latency), and fold
//      every value whose exact score reaches T(B) into p.best
//      with the 64-bit atomic max (fs_pack_candidate: fs_better's order).
//      Folding any candidate is safe; only skipping needs the proof.
//
// Once the row's bound is near its final score nearly every group is ruled
// out by test 3 (N = 256, logits of std 1: 0.37-0.39 of a warp's 256 tests
// per tile pass after its block's first tile; scripts/rounds_trace.py). Before a block's
// first tile no bound is known (-inf: every group would pass), so that tile
// first folds, per column, the best of its groups' leads (epilogue_leads.cuh:
// a lead's score is exact from the group word alone; the cooperative tile
// ranks them on their approximate scores), then reads the rows' bounds back:
// the best lead any block folded so far, at least this tile's (no block
// waits for the others' leads since session 47: epilogue_leads.cuh).
// (With stream-K, sk: the block's first sampled unit, a whole tile or a
// head.)
#pragma once
#include "fs_params.cuh"
#include "philox_batch.cuh"
#include "gumbel_race.cuh"
#include "gumbel_bound.cuh"
#include "mbarrier.cuh"
#include "epilogue_owner_row.cuh"
#include "epilogue_leads.cuh"
#include "epilogue_registers_inputs.cuh"

#ifndef FS_PING_PONG
#define FS_PING_PONG 0
#endif

// Transpose-reduce: m[0 .. 2K) of every lane -> m[0 .. K) holding the
// maximum of the pair (lane, lane ^ MASK): the lane whose MASK bit is set
// keeps the upper half of its values, the other the lower half.
template <int K, int MASK>
__device__ __forceinline__ void fs_re_halve(float (&m)[8], int lane) {
  const bool up = lane & MASK;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const float send = up ? m[k] : m[k + K], keep = up ? m[k + K] : m[k];
    m[k] = fmaxf(keep, __shfl_xor_sync(0xffffffffu, send, MASK));  // fmaxf drops NaN
  }
}

// The column whose group maximum a lane ends with in lmax[h]: chunk h holds
// accumulator column groups j = 4h .. 4h + 3, whose 8 (j, e) columns the
// three halvings leave one to a lane, q = 4 b2 + 2 b3 + b4 (b: lane bits).
// Where T_N is not a multiple of 32 the last chunk has fewer column groups
// and the lanes of the missing ones get a column past T_N (fs_re_column_ok).
__device__ __forceinline__ int fs_re_column(int lane, int h) {
  const int q = ((lane >> 2) & 1) * 4 + ((lane >> 3) & 1) * 2 + ((lane >> 4) & 1);
  return 8 * (4 * h + (q >> 1)) + 2 * (lane & 3) + (q & 1);
}
// Whether fs_re_column(lane, h) is a column of the tile: always in a whole
// chunk (decided at compile time, h and TN being constants in the unrolled
// loops), in a partial last chunk only below T_N.
template <int TN>
__device__ __forceinline__ bool fs_re_column_ok(int col, int h) {
  return 32 * (h + 1) <= TN || col < TN;
}

// The group maxima of one 64-row block's accumulators: lmax[h] of column
// fs_re_column(lane, h) over the warp's 16 rows. In chunks of 32 columns
// (7 shuffles each, 28 per 128 columns), so that only 8 values are held
// beside the accumulators; a partial last chunk (T_N % 32 = 8, 16 or 24)
// fills its missing column groups with -inf, which its lanes of them keep.
template <int NACC>
__device__ __forceinline__ void fs_re_group_max(const float (&acc)[NACC], float (&lmax)[(NACC + 15) / 16], int lane) {
  static_assert(NACC % 4 == 0 && NACC >= 32 && NACC <= 128, "epilogue_registers: 64 to 256 batch columns, 8 at a time");
  constexpr int J = NACC / 4;  // accumulator column groups of 8 columns
#pragma unroll
  for (int h = 0; h < (NACC + 15) / 16; ++h) {
    float m[8];
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        if (4 * h + j < J)
          m[2 * j + e] = fmaxf(acc[4 * (4 * h + j) + e], acc[4 * (4 * h + j) + e + 2]);
        else
          m[2 * j + e] = fs_own_neg_inf();
      }
    fs_re_halve<4, 4>(m, lane);
    fs_re_halve<2, 8>(m, lane);
    fs_re_halve<1, 16>(m, lane);
    lmax[h] = m[0];
  }
}

// The two values (rows lane/4 and lane/4 + 8) of column col in a lane of
// col's quad (col % 8 / 2 == lane % 4); col is uniform over the quad.
template <int NACC>
__device__ __forceinline__ float2 fs_re_pick(const float (&acc)[NACC], int col) {
  const int jq = col >> 3, e = col & 1;
  float a = 0.0f, b = 0.0f;
#pragma unroll
  for (int j = 0; j < NACC / 4; ++j)
    if (j == jq) {
      a = e ? acc[4 * j + 1] : acc[4 * j];
      b = e ? acc[4 * j + 3] : acc[4 * j + 2];
    }
  return make_float2(a, b);
}

// What a column's bound slot (info[TN + col]) holds for the tests and
// take-ups: a sampled row's threshold T(B) = fs_prune_threshold(B) (its
// tests compare approximate scores: fs_group_may_win, bound 1d), a greedy row's B.
__device__ __forceinline__ float fs_re_test_bound(int kind, float bound) {
  return kind == FS_RE_SAMPLED ? fs_prune_threshold(bound) : bound;
}

// Step 4 for one passing (column col, this warp's group of block mi): the
// lanes of col's quad take their two tokens (rows lane/4 and lane/4 + 8 of
// the group) each: the token's approximate score first (gumbel_bound.cuh:
// one Philox call for the lane's two words, two SFU logarithms per token
// and one for the group word), and only where that reaches the threshold
// T(B) the exact score (the contract's formula, as fs_own_exact_score),
// folded when it reaches T(B); greedy rows their logit (the quad's largest
// one). col must be of the calling quad (col / 2 % 4 == lane % 4), all 8
// lanes of it calling. gw: the group's word; vg: the group's first
// vocabulary index; info: the consumer's values per column (fs_re_tile), the
// rows' seeds and offsets after them.
template <int NACC, int TN>
__device__ __forceinline__ void fs_re_take_group(const float (&acc)[NACC], const fs_fused_params& p, fs_i64 n0,
                                                 int col, fs_i64 vg, int s, const float* info, fs_u32 gw, int lane) {
  const float2 l = fs_re_pick<NACC>(acc, col);
  const fs_i64 n = n0 + col;
  const float bound = info[TN + col], inv_tau = info[col];
  const fs_u64* const row_keys = reinterpret_cast<const fs_u64*>(info + 3 * TN);  // [2][TN]: seeds, offsets
  fs_u64* const best = p.best + n * p.num_samples + s;
  if (info[2 * TN + col] == (float)FS_RE_GREEDY) {
    // The quad's largest candidate, one atomic per group (xor 4, 8, 16 keep
    // lane % 4): a token per atomic (session 18) put every block's 16 per
    // group on the same 128 words of p.best while greedy rows had no bound
    // yet, 1.6-2.8 x cuBLAS's time at temperature 0 (session 19).
    fs_u64 key = 0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int v = (int)vg + (lane >> 2) + 8 * h;
      const float lv = h ? l.y : l.x;
      if (v < p.vocab && lv >= bound) {  // NaN never folds
        const fs_u64 k = fs_pack_candidate(lv, v);
        key = k > key ? k : key;
      }
    }
    const unsigned quad = 0x11111111u << (lane & 3);
#pragma unroll
    for (int m = 4; m < 32; m <<= 1) {
      const fs_u64 o = __shfl_xor_sync(quad, key, m);
      key = o > key ? o : key;
    }
    if (lane < 4 && key != 0) fs_fold_candidate(best, key);
    return;
  }
  // A sampled row's slot holds the threshold T(B) (fs_re_test_bound), not B:
  // a value whose approximate score is below it cannot reach B; one whose
  // exact score reaches T is folded (below B only when it cannot win: folding
  // any candidate is safe).
  // The two tokens' words (tokens v and v + 8: counters x and x + 2) from
  // one call, so that their Philox chains interleave (two calls ran one chain
  // after the other), then their approximate scores. The cooperative tile
  // picks each word and its noise with selects (kSelect): the take-up then
  // has no branch before the exact scores, and the scheduler overlaps the two
  // tokens' work. Ping-pong keeps the branches, which issue fewer
  // instructions beside the other consumer's MMAs. Session 46 (ncu, medians
  // of 10 launches): H200 small N = 256 674.6 k -> 669.9 k cycles, large
  // 1.107 M -> 1.103 M; H100 733.1 k -> 726.6 k, 1.186 M -> 1.179 M. In its
  // call 2 (H200), with branches instead of selects the cooperative tile
  // kept about half of that (677.1 k -> 674.7 k against 671.6 k), and
  // ping-pong (small N = 128) lost 0.4 % with selects (502.9 k against
  // 501.0 k) and nothing with branches.
  constexpr bool kSelect = !FS_PING_PONG;
  const fs_philox_row key = fs_philox_row_init(row_keys[col], row_keys[TN + col], (fs_u32)s);
  const int v_lo = (int)vg + (lane >> 2);  // vg is a group's first index: v & 15 is lane / 4 (+ 8)
  fs_philox_ctr c[2];
  fs_philox_blocks<2, 2>(key, (fs_u32)(v_lo >> 2), c);
  const float thr = bound;
  const float a = __fmul_rn(0.0625f, fs_exp1_approx(gw));
  const int lead = fs_group_lead(gw);
  fs_u32 word[2];
  float st[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int v = v_lo + 8 * h;
    word[h] = fs_own_pick<kSelect>(c[h], v & 3);
    st[h] = __fmaf_rn(h ? l.y : l.x, inv_tau, fs_token_gumbel_approx<kSelect>(a, word[h], (v & 15) == lead));
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int v = (int)vg + (lane >> 2) + 8 * h;
    if (v >= p.vocab || st[h] < thr) continue;  // below the threshold: the exact score is below B
    const float sc = FS_FMA(h ? l.y : l.x, inv_tau, fs_token_gumbel(gw, word[h], v & 15));
    // A NaN score is never folded (never wins). !(sc < thr) also folds when
    // thr is NaN, which is T(+inf): a row whose bound is an infinite score
    // still folds its other infinite scores, whose ties the lowest index wins.
    if (sc == sc && !(sc < thr)) fs_fold_candidate(best, fs_pack_candidate(sc, v));
  }
}

// Gumbel-max over one tile held in the consumer's accumulators (block rows
// v0 .. v0 + 64 MI of the vocabulary, batch rows n0 .. n0 + TN); the
// accumulators are not zeroed (the next tile's first MMAs overwrite them).
// buf: this consumer's fs_re_bytes(MI, TN) of shared memory; c its
// index (named barrier 2 + c: the warpgroup's 128 threads; 1: both
// consumers' 256); leads: run the lead pass first (fs_re_put_leads); rc[q]:
// column tid + 128 q's inputs of sample 0, made before and during the MMAs
// (fs_re_words_before, fs_re_prefetch). Both consumers call it for the same tile (halves of it),
// or with FS_PING_PONG each for its own tiles (only consumer 0 with leads).
template <int MI, int NACC, int TN>
__device__ __forceinline__ void fs_re_tile(float (&acc)[MI][NACC], const fs_fused_params& p, fs_i64 v0, fs_i64 n0,
                                           unsigned char* buf, int c, int wq, int lane, bool leads,
                                           fs_re_col<MI> (&rc)[fs_re_cols(TN)]) {
  static_assert(fs_re_tile_n_ok(TN) && NACC == TN / 2, "epilogue_registers: T_N a multiple of 8 from 64 to 256");
  constexpr int Q = fs_re_cols(TN);  // column slots per consumer thread: tid + 128 q (fs_re_owns)
  constexpr int H = (NACC + 15) / 16;  // group maxima per lane and 64-row block (the last of a partial chunk)
  const fs_re_smem<MI, TN> sm(buf);
  fs_u32* const words = sm.words;
  float* const info = sm.info;
  const int tid = wq * 32 + lane;
  float lmax[MI][H];
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) fs_re_group_max<NACC>(acc[mi], lmax[mi], lane);

  // A greedy row's test bound is at least the largest logit of the warp's
  // groups of its column inside the vocabulary (rows past V are zeros, not
  // tokens): the group that holds it passes and folds it, the warp's other
  // groups of the column pass only if they reach it. (On the block's first
  // tile B is -inf: without this every group of a greedy row would pass.)
  // The same for every sample.
  float gmax[H];
#pragma unroll
  for (int k = 0; k < H; ++k) {
    gmax[k] = fs_own_neg_inf();
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
      if (v0 + 64 * mi + 16 * wq + 16 <= p.vocab) gmax[k] = fmaxf(gmax[k], lmax[mi][k]);  // fmaxf drops NaN
  }

  for (int s = 0; s < p.num_samples; ++s) {
    // 2. Columns tid + 128 q's group words, lead noise and bounds: sample
    // 0's were made before and during the MMAs (with 1/tau, the kind, seed
    // and offset; the bound's load too, stored only now: a store in the hook
    // would wait there for the load).
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      if (!fs_re_owns(tid, q, TN)) continue;
      const int col = tid + 128 * q;
      if (s > 0) {
        fs_re_make_words<MI, TN>(rc[q], v0, s, words, col);
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) fs_re_make_leads<MI, TN>(rc[q], mi, words, sm.gl, col);
        fs_re_load_bound<MI>(rc[q], p, n0 + col, s);
      }
      info[TN + col] = fs_re_test_bound(rc[q].kind, rc[q].bound);
    }
    fs_named_barrier(2 + c, 128);
    if (leads) {
      // The leads' logits go where the lead noise is (gl); each column's
      // thread reads its column's and puts its noise back (its slots alone).
      fs_re_put_leads<MI, NACC, TN>(acc, words, sm.gl, wq, lane);
      fs_named_barrier(2 + c, 128);
#pragma unroll
      for (int q = 0; q < Q; ++q)
        if (fs_re_owns(tid, q, TN) && rc[q].kind == FS_RE_SAMPLED) {
          const int col = tid + 128 * q;
          const fs_u64 lb = fs_re_best_lead<MI, TN, !FS_PING_PONG>(words, rc[q].gn, sm.gl, rc[q].inv_tau, v0,
                                                                      p.vocab, col);
#pragma unroll
          for (int mi = 0; mi < MI; ++mi)
#pragma unroll
            for (int k = 0; k < 4; ++k) sm.gl[(mi * 4 + k) * TN + col] = rc[q].gn[mi][k];
          if (lb != 0) fs_fold_candidate(p.best + (n0 + col) * p.num_samples + s, lb);
        }
      // Read the rows' best back as the bounds: this tile's leads and
      // whatever other blocks folded so far (no waiting for them:
      // epilogue_leads.cuh). The cooperative tile first waits for the other
      // consumer's fold, so that its bound has the whole tile's leads (without
      // them the first tile's take-ups cost 4-8 % of a launch: session 47's
      // variant Q). Ping-pong's lead pass is consumer 0's alone (the other
      // multiplies), and each thread reads back the column it folded itself.
#if !FS_PING_PONG
      fs_named_barrier(1, 256);
#endif
#pragma unroll
      for (int q = 0; q < Q; ++q) {
        const int col = tid + 128 * q;
        if (fs_re_owns(tid, q, TN) && rc[q].kind != FS_RE_DEAD)
          info[TN + col] = fs_re_test_bound(
              rc[q].kind, fmaxf(rc[q].bound, fmaxf(fs_candidate_score(__ldcg(p.best + (n0 + col) * p.num_samples + s)),
                                                   fs_own_neg_inf())));
      }
      fs_named_barrier(2 + c, 128);
    }

    // 3. The lane's MI x H (column, group) tests, all before any group is
    // taken up (independent chains the scheduler interleaves). Branch-free:
    // every input is loaded and both tests are computed, the row's kind
    // picks one. (A branch on the kind, itself a shared-memory load, put
    // each test's other loads behind it and the tests one after another:
    // 1.1-1.5 k cycles per tile at T_N = 128, session 44's phase trace.)
    unsigned pend[MI];
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) pend[mi] = 0;
#pragma unroll
    for (int k = 0; k < H; ++k) {
      // A lane of a partial chunk's missing columns tests nothing (its group
      // maxima are -inf) and reads column 0's slots instead of past T_N.
      const bool ok = fs_re_column_ok<TN>(fs_re_column(lane, k), k);
      const int col = ok ? fs_re_column(lane, k) : 0;
      const float kc = ok ? info[2 * TN + col] : (float)FS_RE_DEAD, b = info[TN + col];
      const bool sampled = kc == (float)FS_RE_SAMPLED, greedy = kc == (float)FS_RE_GREEDY;
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {
        const float l = lmax[mi][k], gl = sm.gl[(mi * 4 + wq) * TN + col];
#if FS_PING_PONG
        // Ping-pong hides this behind the other consumer's MMAs, where only
        // the instructions count: the branch skips a row's other test
        // (session 45, H200, small shape N = 128 under ncu: medians 501.0 k
        // cycles, 504.6 k branch-free).
        const bool pass = sampled ? fs_group_may_win(l, info[col], gl, b) : greedy && !(l < fmaxf(b, gmax[k]));
#else
        const bool pass = (sampled & fs_group_may_win(l, info[col], gl, b)) | (greedy & !(l < fmaxf(b, gmax[k])));
#endif
        pend[mi] |= (unsigned)pass << k;
      }
    }
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      // 4. The passing groups. A lane's tests are of columns of its own quad
      // (fs_re_column: col / 2 % 4 == lane % 4), whose values only the quad's
      // 8 lanes hold: the four quads take up their passing groups at once,
      // one each per round.
      const fs_i64 vg = v0 + 64 * mi + 16 * wq;
      const unsigned quad = 0x11111111u << (lane & 3);
#pragma unroll 1
      for (unsigned any = __ballot_sync(0xffffffffu, pend[mi] != 0); any;
           any = __ballot_sync(0xffffffffu, pend[mi] != 0)) {
        const unsigned mine = any & quad;
        const int src = mine ? __ffs(mine) - 1 : lane;
        const int k = __ffs(__shfl_sync(0xffffffffu, pend[mi], src)) - 1;
        if (lane == src && mine) pend[mi] &= pend[mi] - 1;
        if (!mine) continue;
        const int col = fs_re_column(src, k);
        fs_re_take_group<NACC, TN>(acc[mi], p, n0, col, vg, s, info, words[(mi * 4 + wq) * TN + col], lane);
      }
    }
    fs_named_barrier(2 + c, 128);  // the words and bounds are read before the next sample or tile rewrites them
  }
  // The accumulators are left as they are: the next tile's first MMAs
  // overwrite them (fs_tma_consume_tile's overwrite: wgmma's scale-d = 0).
}
