// sample_logits.cuh: Gumbel-max over logits that were already materialized in
// global memory as fp32 [N, V] (p.weights), with the fused kernels' owner
// epilogue (epilogue_owner.cuh). This is the sampler half of the unfused
// pipeline (GEMM, then sample) that bench/ compares against, and a second
// path to the same samples for the tests.
//
// It only reads. Each block takes one contiguous run of tiles in batch-major
// order (tile = ntile * num_vtiles + vtile), so consecutive tiles share their
// batch rows and every thread keeps its rows' parameters, winners and bounds
// in registers from tile to tile. Each warp copies, through a ring of
// FS_STAGES shared-memory tiles filled by cp.async, exactly the part of each
// tile its own lanes sample (every batch row, 32 / T_N lanes' segments of
// it), so no warp waits for another: no block barrier, only __syncwarp. The
// next FS_STAGES - 1 tiles are in flight while one tile's epilogue runs.
// 16-byte copies where every row starts on 16 bytes (V a multiple of 4 and
// the logits 16-byte aligned), else 4-byte ones; both zero-fill past the
// batch and the vocabulary. Until session 62 each tile was a block of its
// own, read with scalar loads, and sampled by epilogue.cuh (row parameters
// and best keys loaded again per tile, one Philox call per noise group):
// about 1 TB/s of logits at N = 256 on an H200.
// Prelude macros: FS_TV FS_TN FS_STAGES FS_WARPS_M FS_WARPS_N; FS_LOGITS_MIN_BLOCKS (optional).
#pragma once
#include "fs_params.cuh"
#include "pipeline.cuh"

#define FS_THREADS (32 * FS_WARPS_M * FS_WARPS_N)
#define FS_LDL (FS_TV + 4)                // row stride of a staged tile (floats)
#define FS_L_SWZ false                    // staged row-major, unswizzled
#define FS_EPI_WARPS (FS_THREADS / 32)    // every warp copies and samples
#define FS_OWN_WARP_FOLD 1                // a warp's lanes of a row fold one winner between them
#define FS_LOGITS_STAGE (FS_TN * FS_LDL)  // floats of one staged tile
static_assert(FS_TV % 4 == 0, "T_V must be a multiple of 4");
static_assert(FS_STAGES >= 2, "the logits ring needs two stages or more");
static_assert(FS_TN <= 32 && 32 % FS_TN == 0, "logits: T_N must be 8, 16 or 32");

#include "epilogue_owner.cuh"
#include "reduce.cuh"

// A warp's part of a staged tile: thread t samples row t % T_N, values
// [VPS (t / T_N), VPS (t / T_N + 1)) (fs_own_epilogue with T_N <= 32 rows at
// a time), so warp w's lanes read every row's columns [w COLS, (w + 1) COLS).
struct fs_logits_part {
  static constexpr int COLS = 32 / FS_TN * fs_own_layout::VPS;
  static constexpr int CPR = COLS / 4;  // 16-byte chunks per row of the part
  static_assert(COLS % 4 == 0 && (FS_TN * CPR) % 32 == 0, "logits: whole 16-byte chunks per lane");
  // T_V T_N < 512 (tv16 tn8, tv16 tn16, tv32 tn8): fewer than 32 threads sample a tile (T_N rows of
  // T_V / 16 noise groups), so warp 0's part would be wider than the tile, and its zero-filling copies of
  // columns T_V .. COLS - 1 would land in the next rows (and past the last row, the next stage or the end of
  // the ring). KernelSpec::validate rejects those specs.
  static_assert(COLS <= FS_TV, "logits: a warp's part must lie inside the staged tile (T_V T_N >= 512)");
};

// Issues this lane's copies of its warp's part (first column c0) of tile
// (v0, n0) into `stage` (not committed): coalesced, consecutive lanes on
// consecutive chunks of a row. The tile's origin and how many of its rows and
// columns exist are worked out once; each copy then costs a 32 x 32-bit
// multiply-add and two compares.
__device__ __forceinline__ void fs_logits_issue(float* stage, const float* logits, const fs_fused_params& p, fs_i64 v0,
                                                fs_i64 n0, int c0, int lane, bool wide) {
  using part = fs_logits_part;
  const fs_i64 rows_left = p.rows - n0, cols_left = p.vocab - v0;  // both >= 1
  const int nrows = rows_left < FS_TN ? (int)rows_left : FS_TN;
  const int ncols = cols_left < FS_TV ? (int)cols_left : FS_TV;
  const int vocab = (int)p.vocab;  // < 2^31 (kMaxVocab)
  const float* const origin = logits + n0 * p.vocab + v0;
  if (wide) {
#pragma unroll
    for (int j = 0; j < FS_TN * part::CPR / 32; ++j) {
      const int i = j * 32 + lane, nl = i / part::CPR, col = c0 + 4 * (i % part::CPR);
      const bool ok = nl < nrows && col < ncols;  // V % 4 == 0: the whole chunk is inside
      fs_cp_async16(stage + nl * FS_LDL + col, ok ? origin + (fs_i64)nl * vocab + col : logits, ok);
    }
  } else {
#pragma unroll 4
    for (int j = 0; j < FS_TN * part::COLS / 32; ++j) {
      const int i = j * 32 + lane, nl = i / part::COLS, col = c0 + i % part::COLS;
      const bool ok = nl < nrows && col < ncols;
      fs_cp_async4(stage + nl * FS_LDL + col, ok ? origin + (fs_i64)nl * vocab + col : logits, ok);
    }
  }
}

// FS_LOGITS_MIN_BLOCKS (the generator's, render.cpp: only with one noise
// group per thread and tile): the blocks per SM shared memory lets run, which
// ptxas's register cap then lets run too.
#ifdef FS_LOGITS_MIN_BLOCKS
static_assert(fs_own_layout::GROUPS == 1, "logits: minimum blocks only with one noise group per thread and tile");
#define FS_LOGITS_BOUNDS __launch_bounds__(FS_THREADS, FS_LOGITS_MIN_BLOCKS)
#else
#define FS_LOGITS_BOUNDS __launch_bounds__(FS_THREADS)
#endif

extern "C" __global__ void FS_LOGITS_BOUNDS fs_fused_kernel(const fs_fused_params p) {
  extern __shared__ __align__(128) unsigned char fs_smem[];
  float* const ring = reinterpret_cast<float*>(fs_smem);
  const float* const logits = static_cast<const float*>(p.weights);
  const bool wide = (p.vocab & 3) == 0 && (reinterpret_cast<fs_u64>(logits) & 15) == 0;
  const int lane = (int)(threadIdx.x & 31);
  const int c0 = (int)(threadIdx.x >> 5) * fs_logits_part::COLS;  // this warp's part
  const bool copies = c0 < FS_TV;  // warps past the segments copy and sample nothing (fs_own_epilogue::active)
  // The launch has fewer than 2^31 tiles (the host checks), so 32-bit tile counters.
  const int vtiles = p.num_vtiles;
  const int total = (int)((p.rows + FS_TN - 1) / FS_TN) * vtiles;
  const int per = (total + (int)gridDim.x - 1) / (int)gridDim.x;
  const int first = min((int)blockIdx.x * per, total), end = min(first + per, total);

  // Loader cursor (tile ld = ld_nt * vtiles + ld_vt), FS_STAGES - 1 tiles ahead.
  int ld = first, ld_vt = first % vtiles, ld_nt = first / vtiles, ld_stage = 0;
  auto issue = [&]() {
    if (ld < end) {
      if (copies)
        fs_logits_issue(ring + ld_stage * FS_LOGITS_STAGE, logits, p, (fs_i64)ld_vt * FS_TV, (fs_i64)ld_nt * FS_TN, c0,
                        lane, wide);
      ++ld;
      if (++ld_vt == vtiles) {
        ld_vt = 0;
        ++ld_nt;
      }
    }
    fs_cp_async_commit();  // an empty group past the last tile keeps the wait counts uniform
    ld_stage = ld_stage + 1 == FS_STAGES ? 0 : ld_stage + 1;
  };
#pragma unroll
  for (int s = 0; s < FS_STAGES - 1; ++s) issue();

  fs_own_epilogue epi((int)threadIdx.x);
  int vt = first % vtiles, nt = first / vtiles, stage = 0;
  for (int t = first; t < end; ++t) {
    fs_cp_async_wait<FS_STAGES - 2>();  // this lane's copies of tile t have landed
    __syncwarp();                       // the warp's have, and its lanes are done with the stage read last time
    issue();                            // into that stage
    // A warp past the segments holds no row; the epilogue would read its
    // inactive threads' (ignored) values from warp 0's part, unsynchronized.
    if (copies) epi.tile(ring + stage * FS_LOGITS_STAGE, p, (fs_i64)vt * FS_TV, (fs_i64)nt * FS_TN, t + 1 < end);
    stage = stage + 1 == FS_STAGES ? 0 : stage + 1;
    if (++vt == vtiles) {
      vt = 0;
      ++nt;
    }
  }
  fs_cp_async_wait<0>();
  epi.finish(p);
  fs_grid_finish(p);
}
