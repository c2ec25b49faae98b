// fused_wgmma_coop.cuh: the cooperative warp-specialized wgmma kernel (sm_90a,
// bf16/fp16). Three warpgroups per block:
//   producer    (warpgroup 0; one thread works) streams (T_V x 64) W and
//               (T_N x 64) H stages with the tensor memory accelerator
//               (tma_producer.cuh) into a ring of FS_STAGES stages;
//   consumers   (warpgroups 1, 2) share every tile and every stage: consumer
//               c multiplies vocabulary rows [c T_V/2, (c+1) T_V/2) of the
//               tile by the stage's whole H slice (m64nT_Nk16, one or two
//               64-row blocks each). A stage is freed (`empty`, 256
//               arrivals) once both consumers' MMAs on it are done.
// Unlike the ping-pong wgmma_ws, one H stage feeds both consumers, so the
// shared-memory traffic per MMA is lower (the large-batch case). Both
// consumers run the Gumbel epilogue of a tile together (eight warps over the
// staged T_V-wide logits, as in fused_wgmma.cuh) while the producer already
// fills the stages of the block's next tile.
//
// Prelude macros: FS_TV (128 or 256) FS_TN FS_TD(=64) FS_STAGES
// FS_WARPS_M(=12) FS_WARPS_N(=1), FS_DTYPE_BF16 / FS_DTYPE_F16, and the
// generated fs_wgmma_k16(acc, desc_w, desc_h).
// Kernel parameters: the fs_fused_params block, then the tensor maps of W
// (box 64 x T_V) and H (box 64 x T_N), encoded by runtime/tensor_maps.cpp.
#pragma once
#include "fs_params.cuh"
#include "pipeline.cuh"
#include "mbarrier.cuh"
#include "tma_producer.cuh"
#include "wgmma_ops.cuh"
#include "epilogue_rows.cuh"

#define FS_THREADS (32 * FS_WARPS_M)
#define FS_MI (FS_TV / 128)                 // 64-row blocks per consumer
#define FS_NACC (FS_TN / 2)                 // fp32 accumulators per thread per 64-row block
#define FS_LDL (FS_TV + 4)                  // row stride of the staged logits
#define FS_EPI_N fs_wgmma_epilogue_rows(FS_TN)  // batch rows per epilogue pass
#define FS_EPI_WARPS 8                      // both consumer warpgroups run the epilogue
// Noise chains per lane in the epilogue (the accumulators stay live across
// its passes). Measured on an H200 (bf16, V=151936, d=4096, tau=1): tv256 tn128
// 503 -> 462 us (N=128) and 818 -> 755 us (N=256) with four instead of two;
// tv128 tn256 at N=256 700 -> 752 us, so it keeps two.
#define FS_EPI_G_MAX (FS_TV == 256 ? 4 : 2)
static_assert(FS_TD == 64, "wgmma_coop: T_d must be 64 (one 128-byte swizzle row)");
static_assert(FS_STAGES >= 2, "wgmma_coop: at least two stages");
static_assert(FS_WARPS_M == 12 && FS_WARPS_N == 1, "wgmma_coop: one producer and two consumer warpgroups (w12x1)");
static_assert(FS_TV == 128 || FS_TV == 256, "wgmma_coop: T_V is 128 or 256 (64 or 128 rows per consumer)");
static_assert(FS_TN % 8 == 0 && FS_TN <= 256 && FS_TN % FS_EPI_N == 0, "wgmma_coop: T_N must be a multiple of 8 up to 256");
static_assert(FS_MI * FS_NACC <= 128, "wgmma_coop: at most 128 accumulators per thread");

#include "epilogue.cuh"
#include "reduce.cuh"

extern "C" __global__ void __launch_bounds__(FS_THREADS, 1) fs_fused_kernel(FS_TMA_KERNEL_PARAMS) {
  extern __shared__ __align__(128) unsigned char fs_smem_raw[];
  unsigned char* fs_smem = fs_smem_align_1024(fs_smem_raw);
  fs_u16* Ws = reinterpret_cast<fs_u16*>(fs_smem);
  fs_u16* Hs = Ws + FS_STAGES * FS_TV * FS_TD;
  float* L = reinterpret_cast<float*>(Hs + FS_STAGES * FS_TN * FS_TD);  // [FS_EPI_N][FS_LDL]
  fs_u64* full = reinterpret_cast<fs_u64*>(L + FS_EPI_N * FS_LDL);      // [FS_STAGES]
  fs_u64* empty = full + FS_STAGES;                                     // [FS_STAGES]

  const int wg = threadIdx.x >> 7, tid = threadIdx.x & 127;
  if (threadIdx.x == 0) fs_tma_ring_init(full, empty, FS_STAGES, 256);  // empty: every consumer thread
  __syncthreads();

  const fs_i64 n_tiles = (p.rows + FS_TN - 1) / FS_TN;
  const fs_i64 total_tiles = (fs_i64)p.num_vtiles * n_tiles;
  const int ktiles = (int)((p.hidden_dim + FS_TD - 1) / FS_TD);

  if (wg == 0) {
    // Producer: every stage of every tile of this block, in order.
    fs_tma_producer_warpgroup<FS_TV, FS_TN, FS_TD, FS_STAGES>(&tmap_w, &tmap_h, Ws, Hs, full, empty, n_tiles,
                                                              total_tiles, ktiles);
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int c = wg - 1, wq = tid >> 5, lane = tid & 31;
    float acc[FS_MI][FS_NACC];
#pragma unroll
    for (int i = 0; i < FS_MI; ++i)
#pragma unroll
      for (int j = 0; j < FS_NACC; ++j) acc[i][j] = 0.0f;

    const int ew = (int)(threadIdx.x >> 5) - 4;  // epilogue warp 0..7
    // Key prefetch chained through the epilogue calls (epilogue.cuh).
    fs_u64 chain = fs_epilogue_key(p, (blockIdx.x % n_tiles) * FS_TN, fs_epilogue_first_row(ew), 0);
    fs_i64 it = 0;  // the block's stage sequence number
    for (fs_i64 tile = blockIdx.x; tile < total_tiles; tile += gridDim.x) {
      for (int kt = 0; kt < ktiles; ++kt, ++it) {
        const int st = (int)(it % FS_STAGES);
        fs_mbar_wait(&full[st], (unsigned)((it / FS_STAGES) & 1), 1000000 + it);
        fs_wgmma_stage(acc, fs_smem_addr(Ws + st * FS_TV * FS_TD + c * FS_MI * 64 * FS_TD),
                       fs_smem_addr(Hs + st * FS_TN * FS_TD));
        fs_wgmma_wait<1>();  // the previous stage's MMAs are done: free it
        if (kt > 0) fs_mbar_arrive(&empty[(int)((it - 1) % FS_STAGES)]);
      }
      fs_wgmma_wait<0>();
      fs_mbar_arrive(&empty[(int)((it - 1) % FS_STAGES)]);

      // Epilogue, FS_EPI_N batch rows per pass, eight warps.
      const int vtile = (int)(tile / n_tiles), ntile = (int)(tile % n_tiles);
      const fs_i64 next = tile + gridDim.x, next_n0 = next < total_tiles ? (next % n_tiles) * FS_TN : -1;
#pragma unroll
      for (int c0 = 0; c0 < FS_TN; c0 += FS_EPI_N) {
        fs_named_barrier(1, 256);  // the previous pass (or tile) has read L
        fs_wgmma_stage_logits<FS_MI, FS_NACC, FS_EPI_N, FS_LDL>(acc, L, c0, c * FS_MI * 64, wq, lane);
        fs_named_barrier(1, 256);
        const fs_i64 n0 = (fs_i64)ntile * FS_TN + c0;
        fs_tile_epilogue(L, p, (fs_i64)vtile * FS_TV, n0, ew, &chain, c0 + FS_EPI_N < FS_TN ? n0 + FS_EPI_N : next_n0);
      }
    }
  }
  fs_grid_finish(p);
}
