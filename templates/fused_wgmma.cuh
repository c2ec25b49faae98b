// fused_wgmma.cuh: fused LM-head matmul + Gumbel-max for bf16/fp16 on
// Hopper's warpgroup MMA (wgmma, sm_90a). W is the M operand (64 vocabulary
// rows per instruction), H the N operand (the whole batch tile, N = T_N up to
// 256), d the K dimension; both operands are read by the tensor cores straight
// from shared memory through matrix descriptors, so no ldmatrix and no
// register fragments for the operands.
//
// Stages of (T_V x T_d) W and (T_N x T_d) H are filled by the same cp.async
// persistent pipeline as the mma.sync kernel, as T_d / 64 sub-tiles of 64
// columns side by side ([T_d / 64][rows][64], as wgmma_coop's boxes); a
// 64-element (128-byte) row with the 16-byte chunk c of row r stored at
// c ^ (r & 7) is exactly the layout wgmma calls "K-major, 128-byte swizzle",
// as long as every sub-tile starts on a 1024-byte boundary. T_d = 128 reads
// 256 bytes of each row per stage. Each warpgroup owns FS_MI consecutive
// 64-row blocks of the vocabulary tile.
//
// Prelude macros: FS_TV FS_TN FS_TD (64 or 128) FS_STAGES FS_WARPS_M (multiple of 4)
// FS_WARPS_N(=1), FS_DTYPE_BF16 / FS_DTYPE_F16, and the generated
// fs_wgmma_k16(acc, desc_w, desc_h) for this T_N (compiler/wgmma_emitter.cpp).
#pragma once
#include "fs_params.cuh"
#include "pipeline.cuh"
#include "persistent_pipeline.cuh"
#include "wgmma_ops.cuh"
#include "epilogue_rows.cuh"

#define FS_THREADS (32 * FS_WARPS_M)
#define FS_GROUPS (FS_WARPS_M / 4)         // warpgroups
#define FS_MI (FS_TV / (64 * FS_GROUPS))   // 64-row blocks per warpgroup
#define FS_NACC (FS_TN / 2)                // fp32 accumulators per thread per 64-row block
#define FS_CPR 8                           // 16-byte chunks per 128-byte sub-tile row
#define FS_SUB (FS_TD / 64)                // 64-column sub-tiles per stage (one commit group each)
#define FS_LDL (FS_TV + 4)                 // row stride of the staged fp32 logit tile
#define FS_EPI_N fs_wgmma_epilogue_rows(FS_TN)  // batch rows staged per epilogue pass

// With 4+ stages one stage's MMAs (FS_SUB commit groups) stay in flight while the next stage is
// issued (loads then run STAGES-2 stages ahead); with 2-3 stages every
// stage's MMAs complete before the next iteration, so loads run STAGES-1
// ahead. Measured: bytes in flight matter more than MMA overlap at 3 stages.
#define FS_WGMMA_LAG (FS_STAGES >= 4 ? 1 : 0)
static_assert(FS_TD == 64 || FS_TD == 128, "wgmma: T_d must be 64 or 128 (one or two 128-byte swizzle rows)");
static_assert(FS_WARPS_M % 4 == 0 && FS_WARPS_N == 1, "wgmma: whole warpgroups along the vocabulary");
static_assert(FS_TV % (64 * FS_GROUPS) == 0, "wgmma: T_V must be a multiple of 64 per warpgroup");
static_assert(FS_TN % 8 == 0 && FS_TN <= 256 && FS_TN % FS_EPI_N == 0, "wgmma: T_N must be a multiple of 8 up to 256");

#include "epilogue.cuh"
#include "reduce.cuh"

typedef fs_tile_loader<FS_TV, FS_CPR, FS_THREADS, 2, 128, true> fs_w_loader;
typedef fs_tile_loader<FS_TN, FS_CPR, FS_THREADS, 2, 128, true> fs_h_loader;

extern "C" __global__ void __launch_bounds__(FS_THREADS, 1) fs_fused_kernel(const fs_fused_params p) {
  extern __shared__ __align__(128) unsigned char fs_smem_raw[];
  unsigned char* fs_smem = fs_smem_align_1024(fs_smem_raw);
  fs_u16* Ws = reinterpret_cast<fs_u16*>(fs_smem);
  fs_u16* Hs = Ws + FS_STAGES * FS_TV * FS_TD;
  float* L = reinterpret_cast<float*>(Hs + FS_STAGES * FS_TN * FS_TD);  // [FS_EPI_N][FS_LDL]
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int group = warp >> 2, wq = warp & 3;  // warpgroup, warp within it

  float acc[FS_MI][FS_NACC];
#pragma unroll
  for (int i = 0; i < FS_MI; ++i)
#pragma unroll
    for (int j = 0; j < FS_NACC; ++j) acc[i][j] = 0.0f;

  // One 64-column loader cursor: sub-tile h of stage kt is its k-slice FS_SUB kt + h.
  fs_operand_loader<fs_w_loader, fs_h_loader, FS_TV, FS_TN, 64> loader;
  auto load = [&](int st, int vtile, int ntile, int kt) {
#pragma unroll
    for (int h = 0; h < FS_SUB; ++h)
      loader.load(p, Ws + (st * FS_SUB + h) * FS_TV * 64, Hs + (st * FS_SUB + h) * FS_TN * 64, vtile, ntile,
                  kt * FS_SUB + h);
  };

  auto compute = [&](int st) {
    fs_fence_proxy_async();
#pragma unroll
    for (int h = 0; h < FS_SUB; ++h)
      fs_wgmma_stage(acc, fs_wgmma_desc(fs_smem_addr(Ws + (st * FS_SUB + h) * FS_TV * 64 + group * FS_MI * 64 * 64)),
                     fs_wgmma_desc(fs_smem_addr(Hs + (st * FS_SUB + h) * FS_TN * 64)));
    fs_wgmma_wait<FS_WGMMA_LAG * FS_SUB>();  // older stages' MMAs are done: their buffers may be refilled
  };

  // Key prefetch chained through the epilogue calls (epilogue.cuh).
  const fs_i64 n_tiles = (p.rows + FS_TN - 1) / FS_TN, total_tiles = (fs_i64)p.num_vtiles * n_tiles;
  fs_u64 chain = fs_epilogue_key(p, (blockIdx.x % n_tiles) * FS_TN, fs_epilogue_first_row(warp), 0);
  auto finish = [&](int vtile, int ntile) {
    // Stage FS_EPI_N batch rows at a time as L[n][v], then sample them.
    fs_wgmma_wait<0>();
    const fs_i64 next = (fs_i64)vtile * n_tiles + ntile + gridDim.x;
    const fs_i64 next_n0 = next < total_tiles ? (next % n_tiles) * FS_TN : -1;
#pragma unroll
    for (int c0 = 0; c0 < FS_TN; c0 += FS_EPI_N) {
      if (c0 > 0) __syncthreads();  // the previous pass has read L
      fs_wgmma_stage_logits<FS_MI, FS_NACC, FS_EPI_N, FS_LDL>(acc, L, c0, group * FS_MI * 64, wq, lane);
      __syncthreads();
      const fs_i64 n0 = (fs_i64)ntile * FS_TN + c0;
      fs_tile_epilogue(L, p, (fs_i64)vtile * FS_TV, n0, warp, &chain, c0 + FS_EPI_N < FS_TN ? n0 + FS_EPI_N : next_n0);
    }
  };

  fs_persistent_pipeline<FS_STAGES, FS_TN, FS_TD, FS_WGMMA_LAG>(p, load, compute, finish);
  fs_grid_finish(p);
}
