// fused_wgmma_ws.cuh: the warp-specialized wgmma kernel (sm_90a, bf16/fp16).
// Three warpgroups per block:
//   producer    (warpgroup 0; one thread works) streams (T_V x 64) W and
//               (T_N x 64) H stages into a ring of FS_STAGES stages with the
//               tensor memory accelerator (tma.cuh): two bulk tensor copies
//               per stage, whose bytes land on the stage's `full` mbarrier;
//   consumer 0/1 (warpgroups 1, 2) take the block's tiles in turn (ping-pong):
//               while one runs its tile's MMAs the other runs the previous
//               tile's Gumbel epilogue, so the epilogue's ALU work overlaps
//               the tensor cores instead of stalling them. A consumer frees a
//               stage (its `empty` mbarrier) once the MMAs that read it are
//               done, and signals `order[c]` when its tile's MMAs are done.
// A phase-parity wait is only unambiguous within one phase of the barrier:
// the `order` handshake keeps each consumer's waits on a stage in round order
// (without it a consumer could pass a wait one whole round early).
// The stage layout (128-byte rows, chunk c of row r at c ^ (r & 7), stages on
// 1024-byte boundaries) is both the copy engine's SWIZZLE_128B and wgmma's
// K-major 128-byte swizzle. Rows past V or N and columns past d arrive as
// zeros. The producer gives its registers to the consumers (setmaxnreg),
// which hold up to 128 fp32 accumulators per thread.
//
// Kernel parameters: the fs_fused_params block, then the tensor maps of W
// (box 64 x T_V) and H (box 64 x T_N), encoded by runtime/tensor_maps.cpp.
//
// Prelude macros: FS_TV (64 or 128: one consumer's vocabulary rows) FS_TN
// FS_TD(=64) FS_STAGES FS_WARPS_M(=12) FS_WARPS_N(=1), FS_DTYPE_BF16 /
// FS_DTYPE_F16, and the generated fs_wgmma_k16(acc, desc_w, desc_h).
#pragma once
#include "fs_params.cuh"
#include "pipeline.cuh"
#include "mbarrier.cuh"
#include "tma_producer.cuh"
#include "wgmma_ops.cuh"
#include "epilogue_rows.cuh"

#define FS_THREADS (32 * FS_WARPS_M)
#define FS_MI (FS_TV / 64)                  // 64-row blocks per consumer tile
#define FS_NACC (FS_TN / 2)                 // fp32 accumulators per thread per 64-row block
#define FS_LDL (FS_TV + 4)                  // row stride of a consumer's staged logits
#define FS_EPI_N fs_ws_epilogue_rows(FS_TN, FS_TV)  // batch rows per epilogue pass
#define FS_EPI_WARPS 4                      // one consumer warpgroup runs each epilogue
static_assert(FS_TD == 64, "wgmma_ws: T_d must be 64 (one 128-byte swizzle row)");
static_assert(FS_STAGES >= 3, "wgmma_ws: at least three stages");
static_assert(FS_WARPS_M == 12 && FS_WARPS_N == 1, "wgmma_ws: one producer and two consumer warpgroups (w12x1)");
static_assert(FS_TV == 64 || FS_TV == 128, "wgmma_ws: T_V is 64 or 128 rows per consumer");
static_assert(FS_TN % 8 == 0 && FS_TN <= 256 && FS_TN % FS_EPI_N == 0, "wgmma_ws: T_N must be a multiple of 8 up to 256");
static_assert(FS_MI * FS_NACC <= 128, "wgmma_ws: at most 128 accumulators per thread");

#include "epilogue.cuh"
#include "reduce.cuh"

extern "C" __global__ void __launch_bounds__(FS_THREADS, 1) fs_fused_kernel(FS_TMA_KERNEL_PARAMS) {
  extern __shared__ __align__(128) unsigned char fs_smem_raw[];
  unsigned char* fs_smem = fs_smem_align_1024(fs_smem_raw);
  fs_u16* Ws = reinterpret_cast<fs_u16*>(fs_smem);
  fs_u16* Hs = Ws + FS_STAGES * FS_TV * FS_TD;
  float* Ls = reinterpret_cast<float*>(Hs + FS_STAGES * FS_TN * FS_TD);  // [2][FS_EPI_N][FS_LDL]
  fs_u64* full = reinterpret_cast<fs_u64*>(Ls + 2 * FS_EPI_N * FS_LDL);  // [FS_STAGES]
  fs_u64* empty = full + FS_STAGES;                                      // [FS_STAGES]
  fs_u64* order = empty + FS_STAGES;                                     // [2]: a consumer's MMAs done

  const int wg = threadIdx.x >> 7, tid = threadIdx.x & 127;
  // empty: every warp of the consuming warpgroup (fs_tma_release); order[c]: every thread of consumer c.
  if (threadIdx.x == 0) fs_tma_ring_init(full, empty, FS_STAGES, fs_tma_empty_count(128, 1), order, 2, 128);
  __syncthreads();

  const fs_i64 n_tiles = (p.rows + FS_TN - 1) / FS_TN;
  const fs_i64 total_tiles = (fs_i64)p.num_vtiles * n_tiles;
  const int ktiles = (int)((p.hidden_dim + FS_TD - 1) / FS_TD);
  // The waits' last argument only tags them for FS_DEBUG_HANG builds
  // (mbarrier.cuh): 1000000 + it = full, 2000000 + j = order.

  if (wg == 0) {
    // Producer: every stage of every tile of this block, in order.
    const fs_tma_h_maps hmaps{&tmap_h, &tmap_ht, fs_tma_h_box_rows(p.rows, FS_TN, 1), fs_tma_h_tail_rows(p.rows, FS_TN, 1),
                              n_tiles - 1};
    fs_tma_producer_warpgroup<FS_TV, FS_TN, FS_TD, FS_STAGES>(&tmap_w, hmaps, Ws, Hs, full, empty, n_tiles, total_tiles,
                                                              ktiles);
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 224;\n");
    const int c = wg - 1, wq = tid >> 5, lane = tid & 31;
    float* L = Ls + c * FS_EPI_N * FS_LDL;
    const fs_u64 dw0 = fs_wgmma_desc(fs_smem_addr(Ws)), dh0 = fs_wgmma_desc(fs_smem_addr(Hs));  // stage 0
    float acc[FS_MI][FS_NACC];
#pragma unroll
    for (int i = 0; i < FS_MI; ++i)
#pragma unroll
      for (int j = 0; j < FS_NACC; ++j) acc[i][j] = 0.0f;

    // Key prefetch chained through this consumer's epilogue calls (epilogue.cuh).
    const fs_i64 first = (fs_i64)blockIdx.x + c * gridDim.x;
    fs_u64 chain = fs_epilogue_key(p, first < total_tiles ? (first % n_tiles) * FS_TN : -1, fs_epilogue_first_row(wq), 0);
    fs_i64 j = 0;  // the block's tile number
    for (fs_i64 tile = blockIdx.x; tile < total_tiles; tile += gridDim.x, ++j) {
      if ((int)(j & 1) != c) continue;
      // Ping-pong: this tile's MMAs start once the other consumer's MMAs
      // for the block's previous tile are done (it then runs its epilogue).
      // This also keeps every stage's `full` waits in order: when a consumer
      // waits on round r of a stage, round r - 1 has been waited for.
      if (j > 0) fs_mbar_wait(&order[1 - c], (unsigned)(((j - 1) >> 1) & 1), 2000000 + j);
      fs_ring_pos<FS_STAGES> pos(j * ktiles);
      fs_tma_consume_tile<FS_TV, FS_TN, FS_TD, FS_STAGES>(acc, full, empty, pos, dw0, dh0, ktiles, 1000000 + j * ktiles);
      fs_mbar_arrive(&order[c]);

      // Epilogue, FS_EPI_N batch rows per pass.
      const int vtile = (int)(tile / n_tiles), ntile = (int)(tile % n_tiles);
      const fs_i64 next = tile + 2 * (fs_i64)gridDim.x;  // this consumer's next tile
      const fs_i64 next_n0 = next < total_tiles ? (next % n_tiles) * FS_TN : -1;
#pragma unroll
      for (int c0 = 0; c0 < FS_TN; c0 += FS_EPI_N) {
        fs_named_barrier(1 + c, 128);  // the previous pass (or tile) has read L
        fs_wgmma_stage_logits<FS_MI, FS_NACC, FS_EPI_N, FS_LDL>(acc, L, c0, 0, wq, lane);
        fs_named_barrier(1 + c, 128);
        const fs_i64 n0 = (fs_i64)ntile * FS_TN + c0;
        fs_tile_epilogue(L, p, (fs_i64)vtile * FS_TV, n0, wq, &chain, c0 + FS_EPI_N < FS_TN ? n0 + FS_EPI_N : next_n0);
      }
    }
  }
  fs_grid_finish(p);
}
