// fused_simt.cuh: fused matmul + Gumbel-max for fp32 weights on the SIMT
// pipes (fp32 products, fp32 accumulation; no TF32). Same persistent tiling,
// pipeline and epilogue as fused_mma.cuh. Lanes span the vocabulary (T_V / 32 rows
// each, strided by 32), warps span the batch (T_N / warps rows each);
// shared rows are padded by 16 bytes so 16-byte reads are conflict-free.
// Prelude macros: FS_TV FS_TN FS_TD FS_STAGES FS_WARPS_M FS_WARPS_N.
#pragma once
#include "fs_params.cuh"
#include "pipeline.cuh"
#include "persistent_pipeline.cuh"

#define FS_THREADS (32 * FS_WARPS_M * FS_WARPS_N)
#define FS_NWARPS (FS_WARPS_M * FS_WARPS_N)
#define FS_RM (FS_TV / 32)         // vocabulary rows per lane
#define FS_RN (FS_TN / FS_NWARPS)  // batch rows per warp
#define FS_LDS (FS_TD + 4)         // padded shared row, in floats
#define FS_CPR (FS_TD / 4)         // 16-byte chunks per row
#define FS_LDL (FS_TV + 4)

static_assert(FS_TV % 32 == 0, "simt: T_V must be a multiple of 32");
static_assert(FS_TN % FS_NWARPS == 0, "simt: T_N must be a multiple of the warp count");
static_assert(FS_TD % 4 == 0, "simt: T_d must be a multiple of 4");

#include "epilogue.cuh"
#include "reduce.cuh"

typedef fs_tile_loader<FS_TV, FS_CPR, FS_THREADS, 4, FS_LDS * 4, false> fs_w_loader;
typedef fs_tile_loader<FS_TN, FS_CPR, FS_THREADS, 4, FS_LDS * 4, false> fs_h_loader;

extern "C" __global__ void __launch_bounds__(FS_THREADS) fs_fused_kernel(const fs_fused_params p) {
  extern __shared__ __align__(128) unsigned char fs_smem[];
  float* Ws = reinterpret_cast<float*>(fs_smem);
  float* Hs = Ws + FS_STAGES * FS_TV * FS_LDS;
  float* L = Hs + FS_STAGES * FS_TN * FS_LDS;  // staged logit tile [T_N][FS_LDL]
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

  float acc[FS_RM][FS_RN];
#pragma unroll
  for (int i = 0; i < FS_RM; ++i)
#pragma unroll
    for (int j = 0; j < FS_RN; ++j) acc[i][j] = 0.0f;

  fs_operand_loader<fs_w_loader, fs_h_loader, FS_TV, FS_TN, FS_TD> loader;
  auto load = [&](int st, int vtile, int ntile, int kt) {
    loader.load(p, Ws + st * FS_TV * FS_LDS, Hs + st * FS_TN * FS_LDS, vtile, ntile, kt);
  };


  auto compute = [&](int st) {
    const float* Wst = Ws + st * FS_TV * FS_LDS;
    const float* Hst = Hs + st * FS_TN * FS_LDS;
#pragma unroll 4
    for (int k = 0; k < FS_TD; k += 4) {
      float4 a[FS_RM], b[FS_RN];
#pragma unroll
      for (int i = 0; i < FS_RM; ++i) a[i] = *reinterpret_cast<const float4*>(Wst + (lane + 32 * i) * FS_LDS + k);
#pragma unroll
      for (int j = 0; j < FS_RN; ++j)
        b[j] = *reinterpret_cast<const float4*>(Hst + (warp * FS_RN + j) * FS_LDS + k);
#pragma unroll
      for (int i = 0; i < FS_RM; ++i)
#pragma unroll
        for (int j = 0; j < FS_RN; ++j) {
          acc[i][j] = fmaf(a[i].x, b[j].x, acc[i][j]);
          acc[i][j] = fmaf(a[i].y, b[j].y, acc[i][j]);
          acc[i][j] = fmaf(a[i].z, b[j].z, acc[i][j]);
          acc[i][j] = fmaf(a[i].w, b[j].w, acc[i][j]);
        }
    }
  };

  auto finish = [&](int vtile, int ntile) {
#pragma unroll
    for (int i = 0; i < FS_RM; ++i)
#pragma unroll
      for (int j = 0; j < FS_RN; ++j) {
        L[(warp * FS_RN + j) * FS_LDL + lane + 32 * i] = acc[i][j];
        acc[i][j] = 0.0f;
      }
    __syncthreads();
    fs_tile_epilogue(L, p, (fs_i64)vtile * FS_TV, (fs_i64)ntile * FS_TN);
  };

  fs_persistent_pipeline<FS_STAGES, FS_TN, FS_TD>(p, load, compute, finish);
  fs_grid_finish(p);
}
