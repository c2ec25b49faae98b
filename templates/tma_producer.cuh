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
// own tile, and its slice of the shared one (W or H) into every block with a
// multicast copy. Every block's `empty` therefore counts the consumers of
// the whole cluster (each consumer warp arrives on every block's barrier:
// fs_tma_release), so a producer that sees its stage free knows it is free in
// every block it writes to, and no block waits on another block's producer.
// (A first version had rank 0 copy the whole shared box after collecting the
// other producers' arrivals on a second barrier: one more hop per stage,
// measured 10 % slower than no cluster at N = 256.)
#pragma once
#ifndef FS_EAGER_RELEASE
#define FS_EAGER_RELEASE 0
#endif
#include "fs_params.cuh"
#include "tma.cuh"
#include "mbarrier.cuh"
#include "wgmma_ops.cuh"
#include "tma_boxes.cuh"
#include "cluster.cuh"
#include "stream_k.cuh"

// The TD / BC boxes (BC = fs_tma_box_cols(TD) columns x ROWS rows each) of
// one operand's stage, from column col0; into this block, or with a mask
// into those blocks of the cluster (multicast).
template <int ROWS, int TD>
__device__ __forceinline__ void fs_tma_load_boxes(fs_u16* dst, const fs_tmap* map, int col0, int row, fs_u64* bar,
                                                  fs_u64 policy, unsigned short mask = 0) {
  constexpr int BC = fs_tma_box_cols(TD);
#pragma unroll
  for (int h = 0; h < TD / BC; ++h) {
    if (mask) fs_tma_load_2d_multicast(dst + h * ROWS * BC, map, col0 + h * BC, row, bar, mask, policy);
    else fs_tma_load_2d(dst + h * ROWS * BC, map, col0 + h * BC, row, bar, policy);
  }
}

// H's two maps: the head map copies every batch tile but the last (box of
// head_rows, fs_tma_h_box_rows), the tail map the last, tile n_tiles - 1
// (box of tail_rows, fs_tma_h_tail_rows; when the last tile is whole the host
// passes the head map's contents again). Two kernel parameters, so two
// descriptors to prefetch whatever they hold.
struct fs_tma_h_maps {
  const fs_tmap* head;
  const fs_tmap* tail;
  int head_rows, tail_rows;
  fs_i64 last;  // n_tiles - 1
  __device__ __forceinline__ const fs_tmap* map(fs_i64 ntile) const { return ntile == last ? tail : head; }
  __device__ __forceinline__ int rows(fs_i64 ntile) const { return ntile == last ? tail_rows : head_rows; }
  __device__ __forceinline__ void prefetch() const {
    fs_tma_prefetch_map(head);
    fs_tma_prefetch_map(tail);
  }
};

// Stage `it` of the producer's sequence: waits until the consumers have
// freed it (from its second round on), announces its bytes on `full` (a W
// box of TV rows, an H box of hrows: fs_tma_h_maps::rows), and returns its
// index in the ring.
template <int TV, int TN, int TD, int STAGES>
__device__ __forceinline__ int fs_tma_stage_begin(fs_u64* full, fs_u64* empty, fs_i64 it, int hrows) {
  const int st = (int)(it % STAGES);
  const fs_i64 round = it / STAGES;
  // The tag only matters in FS_DEBUG_HANG builds (mbarrier.cuh).
  if (round > 0) fs_mbar_wait(&empty[st], (unsigned)((round - 1) & 1), it);
  fs_mbar_arrive_expect_tx(&full[st], (TV + hrows) * TD * 2);
  return st;
}

// hm: H's maps and the rows of their boxes per stage (TN in a cluster: the
// blocks' slices of a shared H box add up to the whole tile).
template <int TV, int TN, int TD, int STAGES, int CLUSTER = 1>
__device__ __forceinline__ void fs_tma_produce(const fs_tmap* tmap_w, const fs_tma_h_maps& hm, fs_u16* Ws, fs_u16* Hs,
                                               fs_u64* full, fs_u64* empty, fs_i64 n_tiles, fs_i64 groups,
                                               int ktiles) {
  fs_tma_prefetch_map(tmap_w);
  hm.prefetch();
  const fs_u64 stream_once = fs_l2_policy_evict_first(), reused = fs_l2_policy_evict_last();
  const int rank = (int)(blockIdx.x % CLUSTER);
  const bool share_w = fs_cluster_shares_w(n_tiles, CLUSTER);
  // This block's slice of the shared box: `srows` rows from row `slice0`
  // (none when the box is copied whole by rank 0 and this is another rank).
  const int shared_rows = share_w ? TV : TN;
  const int slices = fs_cluster_slices(shared_rows, CLUSTER);
  const int srows = shared_rows / slices, slice0 = rank * srows;
  constexpr int BC = fs_tma_box_cols(TD);
  fs_i64 it = 0;
  for (fs_i64 g = blockIdx.x / CLUSTER; g < groups; g += gridDim.x / CLUSTER) {
    const fs_tile_ref t = fs_cluster_tile(g, rank, n_tiles, CLUSTER);
    const int v0 = (int)t.vtile * TV, n0 = (int)t.ntile * TN;
    const fs_tmap* const tmap_h = hm.map(t.ntile);
    const int hrows = hm.rows(t.ntile);
    for (int kt = 0; kt < ktiles; ++kt, ++it) {
      const int st = fs_tma_stage_begin<TV, TN, TD, STAGES>(full, empty, it, hrows);
      // A stage of W is TD / BC swizzled boxes of BC columns side by side
      // ([TD / BC][TV][BC]), issued back to back so DRAM sees each row's
      // 2 * TD bytes together; the same for H.
      fs_u16* const ws = Ws + st * TV * TD;
      fs_u16* const hs = Hs + st * TN * TD;
      if constexpr (CLUSTER == 1) {
        fs_tma_load_boxes<TV, TD>(ws, tmap_w, kt * TD, v0, &full[st], stream_once);
        fs_tma_load_boxes<TN, TD>(hs, tmap_h, kt * TD, n0, &full[st], reused);
      } else {
        constexpr unsigned short all = (unsigned short)((1u << CLUSTER) - 1);
        if (share_w) {
          fs_tma_load_boxes<TN, TD>(hs, tmap_h, kt * TD, n0, &full[st], reused);
          if (rank < slices)
            fs_tma_load_boxes<TV, TD>(ws + slice0 * BC, tmap_w, kt * TD, v0 + slice0, &full[st], stream_once, all);
        } else {
          fs_tma_load_boxes<TV, TD>(ws, tmap_w, kt * TD, v0, &full[st], stream_once);
          if (rank < slices)
            fs_tma_load_boxes<TN, TD>(hs + slice0 * BC, tmap_h, kt * TD, n0 + slice0, &full[st], reused, all);
        }
      }
    }
  }
}

// The producer of a stream-K schedule (stream_k.cuh; no cluster): the k-steps
// [k0, k1) of each of the block's units, one stage each, in order.
template <int TV, int TN, int TD, int STAGES>
__device__ __forceinline__ void fs_tma_produce_sk(const fs_tmap* tmap_w, const fs_tma_h_maps& hm, fs_u16* Ws,
                                                  fs_u16* Hs, fs_u64* full, fs_u64* empty, fs_i64 n_tiles,
                                                  const fs_sk_schedule& sched) {
  fs_tma_prefetch_map(tmap_w);
  hm.prefetch();
  const fs_u64 stream_once = fs_l2_policy_evict_first(), reused = fs_l2_policy_evict_last();
  fs_i64 it = 0;
  const int nt = (int)n_tiles;  // tiles < 2^31 (the sampler's limit)
  fs_sk_walk at = fs_sk_walk_start(sched, (int)blockIdx.x);
  fs_sk_unit u;
  while (fs_sk_walk_next(at, u)) {
    const int v0 = u.tile / nt * TV, ntile = u.tile % nt, n0 = ntile * TN;
    const fs_tmap* const tmap_h = hm.map(ntile);
    const int hrows = hm.rows(ntile);
    for (int kt = u.k0; kt < u.k1; ++kt, ++it) {
      const int st = fs_tma_stage_begin<TV, TN, TD, STAGES>(full, empty, it, hrows);
      fs_tma_load_boxes<TV, TD>(Ws + st * TV * TD, tmap_w, kt * TD, v0, &full[st], stream_once);
      fs_tma_load_boxes<TN, TD>(Hs + st * TN * TD, tmap_h, kt * TD, n0, &full[st], reused);
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
__device__ __forceinline__ void fs_tma_producer_warpgroup(const fs_tmap* tmap_w, const fs_tma_h_maps& hm, fs_u16* Ws,
                                                          fs_u16* Hs, fs_u64* full, fs_u64* empty, fs_i64 n_tiles,
                                                          fs_i64 groups, int ktiles) {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
  if ((threadIdx.x & 127) == 0)
    fs_tma_produce<TV, TN, TD, STAGES, CLUSTER>(tmap_w, hm, Ws, Hs, full, empty, n_tiles, groups, ktiles);
}

// The `empty` arrivals of a stage's consumers, one per consumer warp, after
// the warp's wait for its MMAs on the stage (wgmma.wait_group is
// warp-synchronous, so every lane is past it): lane 0 arrives on this block's
// barrier, or in a cluster lane r on the barrier of the block of rank r (each
// block's barrier counts the consumer warps of the whole cluster).
// (Up to session 11 every consumer thread arrived in a single block: 256
// arrivals on one shared-memory word per stage instead of 8.)
template <int CLUSTER>
__device__ __forceinline__ void fs_tma_release(fs_u64* empty_stage) {
  const unsigned lane = threadIdx.x & 31;
  if constexpr (CLUSTER == 1) {
    if (lane == 0) fs_mbar_arrive(empty_stage);
  } else {
    if (lane < CLUSTER) fs_mbar_arrive_remote(empty_stage, lane);
  }
}

// The arrival count of `empty` for `consumer_threads` consumer threads per
// block: their warps, in every block of the cluster.
__device__ constexpr unsigned fs_tma_empty_count(unsigned consumer_threads, int cluster) {
  return consumer_threads / 32 * (unsigned)cluster;
}

// A consumer warpgroup's side of the ring for one tile: for each of the
// tile's k-steps, wait until the stage is full, issue its MMAs (W descriptor
// dw0, H descriptor dh0, both of stage 0, advanced by the stage's offset),
// and once the previous stage's MMAs are done free that stage (`empty`,
// fs_tma_release); with FS_EAGER_RELEASE ("er") wait for the stage's own MMAs
// right after the hook and free it then, so that in bandwidth-bound tiles the
// stage goes back to the producer without waiting for the next one to land.
// Returns with every MMA of the tile complete and every stage freed; pos is
// left at the next stage. tag0 + k-step tags the waits (FS_DEBUG_HANG
// builds). issued (ping-pong, may be null): thread 0 of the warpgroup arrives
// on it once the last k-step's MMAs are issued. hook(kt) runs after k-step
// kt's MMAs are issued, while they run (the register epilogue prepares its
// sampling there: epilogue_registers.cuh); it must not touch the
// accumulators. overwrite: the tile's first MMAs replace the accumulators
// (scale-d = 0), whatever they held: the caller need not zero them.
struct fs_no_hook {
  __device__ __forceinline__ void operator()(int) const {}
};
// A hook that runs only when `on` (stream-K with the register epilogue: a
// tail's k-loop prepares no sampling; one loop for both kinds of unit).
template <class Hook>
struct fs_hook_if {
  Hook hook;
  bool on;
  __device__ __forceinline__ void operator()(int kt) const {
    if (on) hook(kt);
  }
};
template <int TV, int TN, int TD, int STAGES, int MI, int NACC, int CLUSTER = 1, class Hook = fs_no_hook>
__device__ __forceinline__ void fs_tma_consume_tile(float (&acc)[MI][NACC], fs_u64* full, fs_u64* empty,
                                                    fs_ring_pos<STAGES>& pos, fs_u64 dw0, fs_u64 dh0, int ktiles,
                                                    long long tag0, fs_u64* issued = nullptr,
                                                    const Hook& hook = Hook{}, bool overwrite = false) {
  constexpr int BC = fs_tma_box_cols(TD), RB = 2 * BC;  // a box's columns and bytes per row
  int prev = 0;  // the stage of the previous k-step (without er)
  for (int kt = 0; kt < ktiles; ++kt) {
    fs_mbar_wait(&full[pos.st], pos.phase, tag0 + kt);
#pragma unroll
    for (int h = 0; h < TD / BC; ++h)  // the stage's boxes (one commit group each)
      fs_wgmma_stage<MI, NACC, RB>(acc, dw0 + FS_WGMMA_DESC_STEP(pos.st * TV * TD * 2 + h * TV * RB),
                                   dh0 + FS_WGMMA_DESC_STEP(pos.st * TN * TD * 2 + h * TN * RB), overwrite && kt == 0 && h == 0);
    if (issued && kt == ktiles - 1 && (threadIdx.x & 127) == 0) fs_mbar_arrive(issued);
    hook(kt);
    if constexpr (FS_EAGER_RELEASE) {  // this stage's MMAs are done: free it now ("er")
      fs_wgmma_wait<0>();
      fs_tma_release<CLUSTER>(&empty[pos.st]);
    } else {  // the previous stage's MMAs are done: free it
      fs_wgmma_wait<TD / BC>();
      if (kt > 0) fs_tma_release<CLUSTER>(&empty[prev]);
      prev = pos.st;
    }
    pos.advance();
  }
  if constexpr (!FS_EAGER_RELEASE) {
    fs_wgmma_wait<0>();
    fs_tma_release<CLUSTER>(&empty[prev]);
  }
}
