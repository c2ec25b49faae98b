// tma_producer.cuh: the stage ring of the TMA-fed wgmma kernels (wgmma_ws,
// wgmma_coop): its producer, and its consumers' per-tile loop (end of file).
// The producer: One thread walks the block's tiles (tile = blockIdx.x, +=
// gridDim.x; tile = vtile * n_tiles + ntile) and their 64-deep k-slices as one
// flat sequence of stages in a ring of STAGES: it waits until the consumers
// have freed a stage (`empty`, from the second round on), announces the
// stage's bytes on `full` and issues the two bulk tensor copies (W box
// 64 x TV, H box 64 x TN) that complete it.
// In a cluster of CLUSTER > 1 blocks (wgmma_coop) the loop runs over the
// cluster's groups (cluster_tiles.cuh): each block copies the operand of its
// own tile, and rank 0 copies the shared one (W or H) into every block with
// one multicast copy once every block has freed the stage: each producer,
// after its own `empty`, arrives on rank 0's `cempty` (CLUSTER arrivals).
#pragma once
#include "fs_params.cuh"
#include "tma.cuh"
#include "mbarrier.cuh"
#include "wgmma_ops.cuh"
#include "cluster_tiles.cuh"
#include "cluster.cuh"

// The TD / 64 boxes (64 columns x ROWS rows each) of one operand's stage,
// from column col0; into this block, or with a mask into those blocks of the
// cluster (multicast).
template <int ROWS, int TD>
__device__ __forceinline__ void fs_tma_load_boxes(fs_u16* dst, const fs_tmap* map, int col0, int row, fs_u64* bar,
                                                  fs_u64 policy, unsigned short mask = 0) {
#pragma unroll
  for (int h = 0; h < TD / 64; ++h) {
    if (mask) fs_tma_load_2d_multicast(dst + h * ROWS * 64, map, col0 + h * 64, row, bar, mask, policy);
    else fs_tma_load_2d(dst + h * ROWS * 64, map, col0 + h * 64, row, bar, policy);
  }
}

template <int TV, int TN, int TD, int STAGES, int CLUSTER = 1>
__device__ __forceinline__ void fs_tma_produce(const fs_tmap* tmap_w, const fs_tmap* tmap_h, fs_u16* Ws, fs_u16* Hs,
                                               fs_u64* full, fs_u64* empty, fs_i64 n_tiles, fs_i64 groups,
                                               int ktiles, fs_u64* cempty = nullptr) {
  fs_tma_prefetch_map(tmap_w);
  fs_tma_prefetch_map(tmap_h);
  const fs_u64 stream_once = fs_l2_policy_evict_first(), reused = fs_l2_policy_evict_last();
  const int rank = (int)(blockIdx.x % CLUSTER);
  const bool share_w = fs_cluster_shares_w(n_tiles, CLUSTER);
  fs_i64 it = 0;
  for (fs_i64 g = blockIdx.x / CLUSTER; g < groups; g += gridDim.x / CLUSTER) {
    const fs_tile_ref t = fs_cluster_tile(g, rank, n_tiles, CLUSTER);
    const int v0 = (int)t.vtile * TV, n0 = (int)t.ntile * TN;
    for (int kt = 0; kt < ktiles; ++kt, ++it) {
      const int st = (int)(it % STAGES);
      const fs_i64 round = it / STAGES;
      // The tag only matters in FS_DEBUG_HANG builds (mbarrier.cuh).
      if (round > 0) fs_mbar_wait(&empty[st], (unsigned)((round - 1) & 1), it);
      fs_mbar_arrive_expect_tx(&full[st], (TV + TN) * TD * 2);
      // A stage of W is TD / 64 swizzled boxes of 64 columns side by side
      // ([TD / 64][TV][64]), issued back to back so DRAM sees each row's
      // 128 * TD / 64 bytes together; the same for H.
      fs_u16* const ws = Ws + st * TV * TD;
      fs_u16* const hs = Hs + st * TN * TD;
      if constexpr (CLUSTER == 1) {
        fs_tma_load_boxes<TV, TD>(ws, tmap_w, kt * TD, v0, &full[st], stream_once);
        fs_tma_load_boxes<TN, TD>(hs, tmap_h, kt * TD, n0, &full[st], reused);
      } else {
        if (round > 0) fs_mbar_arrive_remote(&cempty[st], 0);  // this block's stage is free
        if (share_w) fs_tma_load_boxes<TN, TD>(hs, tmap_h, kt * TD, n0, &full[st], reused);
        else fs_tma_load_boxes<TV, TD>(ws, tmap_w, kt * TD, v0, &full[st], stream_once);
        if (rank == 0) {
          if (round > 0) fs_mbar_wait(&cempty[st], (unsigned)((round - 1) & 1), it);
          constexpr unsigned short all = (unsigned short)((1u << CLUSTER) - 1);
          if (share_w) fs_tma_load_boxes<TV, TD>(ws, tmap_w, kt * TD, v0, &full[st], stream_once, all);
          else fs_tma_load_boxes<TN, TD>(hs, tmap_h, kt * TD, n0, &full[st], reused, all);
        }
      }
    }
  }
}

// Thread 0, before the block's first barrier: a stage ring's `full`
// barriers (one producer arrival plus the bytes) and `empty` barriers
// (`consumers` arrivals); `extra` more barriers of `extra_count` arrivals after
// them; then the fence that shows them to the copy engine.
__device__ __forceinline__ void fs_tma_ring_init(fs_u64* full, fs_u64* empty, int stages, unsigned consumers,
                                                 fs_u64* extra = nullptr, int extras = 0, unsigned extra_count = 0) {
  for (int s = 0; s < stages; ++s) {
    fs_mbar_init(&full[s], 1);
    fs_mbar_init(&empty[s], consumers);
  }
  for (int i = 0; i < extras; ++i) fs_mbar_init(&extra[i], extra_count);
  fs_mbar_init_fence();
}

// Warpgroup 0 of a TMA-fed kernel: gives up registers for the consumers
// (setmaxnreg, the whole warpgroup) and lets one thread run the producer loop.
template <int TV, int TN, int TD, int STAGES, int CLUSTER = 1>
__device__ __forceinline__ void fs_tma_producer_warpgroup(const fs_tmap* tmap_w, const fs_tmap* tmap_h, fs_u16* Ws,
                                                          fs_u16* Hs, fs_u64* full, fs_u64* empty, fs_i64 n_tiles,
                                                          fs_i64 groups, int ktiles, fs_u64* cempty = nullptr) {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
  if ((threadIdx.x & 127) == 0)
    fs_tma_produce<TV, TN, TD, STAGES, CLUSTER>(tmap_w, tmap_h, Ws, Hs, full, empty, n_tiles, groups, ktiles, cempty);
}

// A consumer warpgroup's side of the ring for one tile: for each of the
// tile's k-steps, wait until the stage is full, issue its MMAs (W descriptor
// dw0, H descriptor dh0, both of stage 0, advanced by the stage's offset),
// and once the previous stage's MMAs are done free that stage (`empty`: one
// arrival per thread). Returns with every MMA of the tile complete and every
// stage freed; pos is left at the next stage. tag0 + k-step tags the waits
// (FS_DEBUG_HANG builds).
template <int TV, int TN, int TD, int STAGES, int MI, int NACC>
__device__ __forceinline__ void fs_tma_consume_tile(float (&acc)[MI][NACC], fs_u64* full, fs_u64* empty,
                                                    fs_ring_pos<STAGES>& pos, fs_u64 dw0, fs_u64 dh0, int ktiles,
                                                    long long tag0) {
  int prev = 0;  // the stage of the previous k-step
  for (int kt = 0; kt < ktiles; ++kt) {
    fs_mbar_wait(&full[pos.st], pos.phase, tag0 + kt);
#pragma unroll
    for (int h = 0; h < TD / 64; ++h)  // the stage's 64-column boxes (one commit group each)
      fs_wgmma_stage(acc, dw0 + FS_WGMMA_DESC_STEP(pos.st * TV * TD * 2 + h * TV * 128),
                     dh0 + FS_WGMMA_DESC_STEP(pos.st * TN * TD * 2 + h * TN * 128));
    fs_wgmma_wait<TD / 64>();  // the previous stage's MMAs are done: free it
    if (kt > 0) fs_mbar_arrive(&empty[prev]);
    prev = pos.st;
    pos.advance();
  }
  fs_wgmma_wait<0>();
  fs_mbar_arrive(&empty[prev]);
}
