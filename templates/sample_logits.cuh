// sample_logits.cuh: the same Gumbel-max tile epilogue over logits that were
// already materialized in global memory as fp32 [N, V] (p.weights). This is
// the sampler half of the unfused pipeline (GEMM, then sample) that bench/
// compares against, and a second path to the same samples for the tests.
//
// It only reads: each block walks its tiles (tile = blockIdx.x, += gridDim.x;
// tile = vtile * n_tiles + ntile) through a ring of FS_STAGES shared-memory
// tiles filled by cp.async, so the next FS_STAGES - 1 tiles are in flight
// while one tile's epilogue runs. 16-byte copies where every row starts on 16
// bytes (V a multiple of 4 and the logits 16-byte aligned), else 4-byte ones;
// both zero-fill past the batch and the vocabulary.
// Prelude macros: FS_TV FS_TN FS_STAGES FS_WARPS_M FS_WARPS_N.
#pragma once
#include "fs_params.cuh"
#include "pipeline.cuh"

#define FS_THREADS (32 * FS_WARPS_M * FS_WARPS_N)
#define FS_LDL (FS_TV + 4)
#define FS_LOGITS_STAGE (FS_TN * FS_LDL)  // floats of one staged tile
static_assert(FS_TV % 4 == 0, "T_V must be a multiple of 4");
static_assert(FS_STAGES >= 2, "the logits ring needs two stages or more");

#include "epilogue.cuh"
#include "reduce.cuh"

// Issues the copies of tile (v0, n0) into `stage` (not committed).
__device__ __forceinline__ void fs_logits_issue(float* stage, const float* logits, const fs_fused_params& p, fs_i64 v0,
                                                fs_i64 n0, bool wide) {
  if (wide) {
    constexpr int CPR = FS_TV / 4;  // 16-byte chunks per tile row
#pragma unroll
    for (int i = threadIdx.x; i < FS_TN * CPR; i += FS_THREADS) {
      const int nl = i / CPR, c = i % CPR;
      const fs_i64 n = n0 + nl, v = v0 + 4 * c;
      const bool ok = n < p.rows && v < p.vocab;  // V % 4 == 0: the whole chunk is inside
      fs_cp_async16(stage + nl * FS_LDL + 4 * c, ok ? logits + n * p.vocab + v : logits, ok);
    }
  } else {
#pragma unroll 4
    for (int i = threadIdx.x; i < FS_TN * FS_TV; i += FS_THREADS) {
      const int nl = i / FS_TV, vl = i % FS_TV;
      const fs_i64 n = n0 + nl, v = v0 + vl;
      const bool ok = n < p.rows && v < p.vocab;
      fs_cp_async4(stage + nl * FS_LDL + vl, ok ? logits + n * p.vocab + v : logits, ok);
    }
  }
}

extern "C" __global__ void __launch_bounds__(FS_THREADS) fs_fused_kernel(const fs_fused_params p) {
  extern __shared__ __align__(128) unsigned char fs_smem[];
  float* const ring = reinterpret_cast<float*>(fs_smem);
  const float* const logits = static_cast<const float*>(p.weights);
  const bool wide = (p.vocab & 3) == 0 && (reinterpret_cast<fs_u64>(logits) & 15) == 0;
  const fs_i64 n_tiles = (p.rows + FS_TN - 1) / FS_TN;
  const fs_i64 total = (fs_i64)p.num_vtiles * n_tiles;

  fs_i64 ld = blockIdx.x;  // the next tile to issue
  int ld_stage = 0;
  auto issue = [&]() {
    if (ld < total)
      fs_logits_issue(ring + ld_stage * FS_LOGITS_STAGE, logits, p, (ld / n_tiles) * FS_TV, (ld % n_tiles) * FS_TN, wide);
    fs_cp_async_commit();  // an empty group past the last tile keeps the wait counts uniform
    ld += gridDim.x;
    ld_stage = ld_stage + 1 == FS_STAGES ? 0 : ld_stage + 1;
  };
#pragma unroll
  for (int s = 0; s < FS_STAGES - 1; ++s) issue();

  int stage = 0;
  for (fs_i64 t = blockIdx.x; t < total; t += gridDim.x) {
    fs_cp_async_wait<FS_STAGES - 2>();  // this thread's copies of tile t have landed
    __syncthreads();                    // everyone's have, and the stage read last iteration is free
    issue();                            // into that stage
    fs_tile_epilogue(ring + stage * FS_LOGITS_STAGE, p, (t / n_tiles) * FS_TV, (t % n_tiles) * FS_TN);
    stage = stage + 1 == FS_STAGES ? 0 : stage + 1;
  }
  fs_cp_async_wait<0>();
  fs_grid_finish(p);
}
