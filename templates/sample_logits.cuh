// sample_logits.cuh: the same Gumbel-max tile epilogue over logits that were
// already materialized in global memory as fp32 [N, V] (p.weights). This is
// the sampler half of the unfused pipeline (GEMM, then sample) that bench/
// compares against, and a second path to the same samples for the tests.
// Prelude macros: FS_TV FS_TN FS_WARPS_M FS_WARPS_N.
#pragma once
#include "fs_params.cuh"

#define FS_THREADS (32 * FS_WARPS_M * FS_WARPS_N)
#define FS_LDL (FS_TV + 4)
static_assert(FS_TV % 4 == 0, "T_V must be a multiple of 4");

#include "epilogue.cuh"
#include "reduce.cuh"

extern "C" __global__ void __launch_bounds__(FS_THREADS) fs_fused_kernel(const fs_fused_params p) {
  extern __shared__ __align__(128) unsigned char fs_smem[];
  float* L = reinterpret_cast<float*>(fs_smem);
  const fs_i64 n_tiles = (p.rows + FS_TN - 1) / FS_TN;
  const int vtile = (int)(blockIdx.x / n_tiles);
  const fs_i64 v0 = (fs_i64)vtile * FS_TV;
  const fs_i64 n0 = (fs_i64)(blockIdx.x % n_tiles) * FS_TN;
  const float* logits = static_cast<const float*>(p.weights);
  for (int i = threadIdx.x; i < FS_TN * FS_TV; i += FS_THREADS) {
    const int nl = i / FS_TV, vl = i % FS_TV;
    const fs_i64 n = n0 + nl, v = v0 + vl;
    L[nl * FS_LDL + vl] = (n < p.rows && v < p.vocab) ? __ldg(logits + n * p.vocab + v) : 0.0f;
  }
  __syncthreads();
  fs_tile_epilogue(L, p, v0, n0);
  fs_grid_finish(p);
}
