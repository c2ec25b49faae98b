// epilogue_registers_inputs.cuh: what the register epilogue (spec token "re",
// epilogue_registers.cuh) needs besides the accumulators, made before and
// while a tile's MMAs run: per batch column, the row's kind, 1/tau, seed and
// offset, the group words and the groups' lead noise of sample 0, and the
// row's bound (fs_re_col); the consumer's shared-memory slots they go to
// (fs_re_smem, layout in epilogue_registers_smem.cuh); the rows and words
// before the MMAs (fs_re_words_before) and the k-loop hook that makes the
// rest piece by piece (fs_re_prefetch, called by fs_tma_consume_tile after
// each k-step's MMAs are issued). Later samples' inputs are made by the same
// functions after the MMAs (fs_re_tile).
#pragma once
#include "fs_params.cuh"
#include "philox_batch.cuh"
#include "gumbel_race.cuh"
#include "gumbel_bound.cuh"
#include "epilogue_owner_row.cuh"
#include "epilogue_registers_smem.cuh"

#define FS_RE_DEAD 0
#define FS_RE_SAMPLED 1
#define FS_RE_GREEDY 2

// Column tid's row and its first sample's sampling inputs, made before the
// tile's MMAs (fs_re_words_before) and while they run (fs_re_prefetch): the
// row's kind, 1/tau and Philox seed and offset (loaded once per row: a
// consumer keeps them from tile to tile while its tiles' batch rows stay the
// same); the groups' approximate lead noise gn of sample s (also in shared
// memory: the tests' bound on every token's noise, upper bound 1d of
// docs/rng.md section 6; the group words are in shared memory only, from
// which the lead pass computes its leads' exact noise); the row's bound B.
template <int MI>
struct fs_re_col {
  fs_i64 row = -1;  // the row whose kind, 1/tau, seed and offset these are
  int kind;
  float inv_tau, bound;
  fs_u64 seed, offset;
  float gn[MI][4];
};

// Row n's kind, 1/tau, seed and offset; false (nothing done) if rc holds them.
template <int MI>
__device__ __forceinline__ bool fs_re_load_row(fs_re_col<MI>& rc, const fs_fused_params& p, fs_i64 n) {
  if (rc.row == n) return false;
  rc.row = n;
  const bool exists = n < p.rows;
  const float tau = exists ? fs_row_temperature(p.row, n) : -1.0f;
  rc.kind = !(exists && fs_temperature_valid(tau)) ? FS_RE_DEAD : tau == 0.0f ? FS_RE_GREEDY : FS_RE_SAMPLED;
  rc.inv_tau = rc.kind == FS_RE_SAMPLED ? 1.0f / tau : 1.0f;
  rc.seed = exists ? fs_row_seed(p.row, n) : 0;
  rc.offset = exists ? fs_row_offset(p.row, n) : 0;
  return true;
}

// The group words of sample s for vocabulary rows v0 .. v0 + 64 MI (one
// Philox call per 64-row block: the four groups of the four warps), to
// column col of words [MI][4][TN] (the lead noise and the take-ups read them
// there; kept in registers through the k-loop they made a T_N = 256 tile
// spill).
template <int MI, int TN>
__device__ __forceinline__ void fs_re_make_words(const fs_re_col<MI>& rc, fs_i64 v0, int s, fs_u32* words, int col) {
  if (rc.kind != FS_RE_SAMPLED) return;
  const fs_philox_row key = fs_philox_row_init(rc.seed, rc.offset, (fs_u32)s);
#pragma unroll
  for (int mi = 0; mi < MI; ++mi) {
    fs_philox_ctr g[1];
    fs_philox_blocks<1>(key, fs_group_ctr((fs_u64)(v0 + 64 * mi)), g);
#pragma unroll
    for (int k = 0; k < 4; ++k) words[(mi * 4 + k) * TN + col] = g[0].v[k];
  }
}

// The approximate lead noise of block mi's four groups (fs_group_lead_approx:
// within FS_GUMBEL_APPROX_ERR of the lead's exact noise, which bounds every
// exact noise of the group; two SFU logarithms each, where the exact noise
// takes two fs_logs), to registers and to column col of gl [MI][4][TN]; from
// the words fs_re_make_words put in column col (this thread's own slots).
template <int MI, int TN>
__device__ __forceinline__ void fs_re_make_leads(fs_re_col<MI>& rc, int mi, const fs_u32* words, float* gl, int col) {
  if (rc.kind != FS_RE_SAMPLED) return;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    rc.gn[mi][k] = fs_group_lead_approx(words[(mi * 4 + k) * TN + col]);
    gl[(mi * 4 + k) * TN + col] = rc.gn[mi][k];
  }
}

// The row's bound for sample s: the best score folded into p.best so far.
template <int MI>
__device__ __forceinline__ void fs_re_load_bound(fs_re_col<MI>& rc, const fs_fused_params& p, fs_i64 n, int s) {
  rc.bound = rc.kind == FS_RE_DEAD ? 0.0f
                                   : fmaxf(fs_candidate_score(__ldcg(p.best + n * p.num_samples + s)), fs_own_neg_inf());
}

// A consumer's fs_re_bytes(MI, TN) of shared memory, by part
// (epilogue_registers_smem.cuh; on the first tile gl holds the leads' logits
// for a moment: fs_re_put_leads).
template <int MI, int TN>
struct fs_re_smem {
  fs_u32* words;  // [MI][4][TN] group words
  float* gl;      // [MI][4][TN] the groups' lead noise
  float* info;    // [3][TN] 1/tau, bound, kind
  fs_u64* keys;   // [2][TN] the rows' Philox seeds and offsets
  __device__ __forceinline__ explicit fs_re_smem(unsigned char* buf)
      : words(reinterpret_cast<fs_u32*>(buf)),
        gl(reinterpret_cast<float*>(buf + fs_re_gl_at(MI, TN))),
        info(reinterpret_cast<float*>(buf + fs_re_info_at(MI, TN))),
        keys(reinterpret_cast<fs_u64*>(buf + fs_re_keys_at(MI, TN))) {}
};

// Before a tile's MMAs are issued, for columns tid + 128 q (q <
// fs_re_cols(TN), fs_re_owns; n: column tid's row): the rows' parameters
// (loaded and stored to shared memory only when the rows changed: a
// consumer keeps them from tile to tile while its tiles' batch rows stay the
// same; nothing else writes those slots) and sample 0's group words. Here
// the words' Philox only delays the tile's first MMAs (on a block's first
// tile the loads overlap the wait for the first stage); made while MMAs run,
// its 64-bit multiplies (IMAD.WIDE) would cost the tensor pipe cycles
// (bench/probes/tensor_contention.cu; a probe without words in the k-loop
// took 1.6 % fewer of the small shape's N = 256 cycles: BENCHMARKS.md,
// session 55). Ping-pong calls it before waiting for its turn. The shared
// slots are free: the previous tile's sampling ended with a barrier after
// its last read.
template <int MI, int TN>
__device__ __forceinline__ void fs_re_words_before(fs_re_col<MI>* rc, const fs_fused_params& p, fs_i64 v0, fs_i64 n,
                                                   unsigned char* buf, int tid) {
  const fs_re_smem<MI, TN> sm(buf);
#pragma unroll
  for (int q = 0; q < fs_re_cols(TN); ++q) {
    if (!fs_re_owns(tid, q, TN)) continue;
    const int col = tid + 128 * q;
    if (fs_re_load_row<MI>(rc[q], p, n + 128 * q)) {
      sm.info[col] = rc[q].inv_tau;
      sm.info[2 * TN + col] = (float)rc[q].kind;
      sm.keys[col] = rc[q].seed;
      sm.keys[TN + col] = rc[q].offset;
    }
    fs_re_make_words<MI, TN>(rc[q], v0, 0, sm.words, col);
  }
}

// The hook of fs_tma_consume_tile (tma_producer.cuh) that makes the rest of
// sample 0's inputs of columns tid + 128 q (after fs_re_words_before) while
// the tile's MMAs run, a piece after each k-step's MMAs are issued: block
// mi's lead noise (SFU logarithms, which the MMAs do not feel) after the
// (mi + 1)st's, the bounds after the last's (as late as possible: a bound
// only rises; fewer k-steps: the later pieces in this order after the last).
template <int MI, int TN>
struct fs_re_prefetch {
  fs_re_col<MI>* rc;  // [fs_re_cols(TN)]
  const fs_fused_params& p;
  fs_i64 n;  // column tid's row
  unsigned char* buf;
  int tid, ktiles;
  __device__ __forceinline__ void operator()(int kt) const {
    const fs_re_smem<MI, TN> sm(buf);
#pragma unroll
    for (int q = 0; q < fs_re_cols(TN); ++q) {
      if (!fs_re_owns(tid, q, TN)) continue;
      const int col = tid + 128 * q;
#pragma unroll
      for (int mi = 0; mi < MI; ++mi)
        if (kt == (mi < ktiles ? mi : ktiles - 1)) fs_re_make_leads<MI, TN>(rc[q], mi, sm.words, sm.gl, col);
      if (kt == ktiles - 1) fs_re_load_bound<MI>(rc[q], p, n + 128 * q, 0);  // to shared memory after the MMAs
    }
  }
};
