// cluster.cuh: thread-block clusters (sm_90) for the multicast loads of
// wgmma_coop: a barrier over the whole cluster, arrivals on a peer block's
// mbarrier, and the bulk tensor copy that lands one box in every block of the
// cluster (same shared-memory offset, each block's own mbarrier at the same
// offset counts the bytes). With a 1-D grid of clusters of C blocks, a block's
// rank is blockIdx.x % C and its cluster blockIdx.x / C (cluster_tiles.cuh).
#pragma once
#include "fs_params.cuh"
#include "tma.cuh"

// Every thread of every block of the cluster: the blocks' earlier shared
// memory writes (mbarrier inits) are visible to the others afterwards, and no
// block leaves while a peer may still signal it.
__device__ __forceinline__ void fs_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

// One arrival on the mbarrier at `bar`'s offset in the block of cluster rank
// `rank`. Default semantics (release at CTA scope), as CUTLASS's cluster
// barriers: the caller has already waited for its block's consumers to free
// the stage. The cluster-scope forms (arrive .release.cluster, try_wait
// .acquire.cluster) compile to MEMBAR.ALL.GPU before the arrival and an L1
// invalidation after the wait, once per stage: measured on an H200 at N = 256
// (V=151936, d=4096, coop tv128 tn128 s4 w20x1 c2) 1029.6 us against 580.9
// with these forms.
__device__ __forceinline__ void fs_mbar_arrive_remote(fs_u64* bar, unsigned rank) {
  asm volatile(
      "{\n .reg .b32 ra;\n mapa.shared::cluster.u32 ra, %0, %1;\n"
      " mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(fs_smem_addr(bar)),
      "r"(rank)
      : "memory");
}

// fs_tma_load_2d into the blocks of `mask` (bit r: cluster rank r).
__device__ __forceinline__ void fs_tma_load_2d_multicast(void* dst, const fs_tmap* map, int col, int row, fs_u64* bar,
                                                         unsigned short mask, fs_u64 policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      ".L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5, %6;\n" ::"r"(fs_smem_addr(dst)),
      "l"(reinterpret_cast<fs_u64>(map)), "r"(col), "r"(row), "r"(fs_smem_addr(bar)), "h"(mask), "l"(policy)
      : "memory");
}
