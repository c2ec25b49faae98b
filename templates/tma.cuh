// tma.cuh: Hopper's tensor memory accelerator (sm_90): one thread copies a
// whole 2-D box of a row-major [rows, d] operand from global into shared
// memory, laid out with the 128-byte swizzle that wgmma reads, and the bytes
// are counted on an mbarrier ("complete_tx") when they land. Rows or columns
// outside the tensor arrive as zeros (and are still counted), so tiles at the
// edges of V, N and d need no special code.
//
// The tensor map (box, swizzle, strides, base address) is encoded on the host
// (runtime/tensor_maps.cpp) and passed as a __grid_constant__ kernel
// parameter; fs_tmap matches the driver's CUtensorMap (128 bytes, 64-aligned).
#pragma once
#include "fs_params.cuh"
#include "mbarrier.cuh"

struct __align__(64) fs_tmap {
  fs_u64 opaque[16];
};

// The parameters of every TMA-fed kernel, in the order the runtime passes
// them (runtime/sampler.cpp): the block, then the maps of W and H, then H's
// tail map (the last batch tile's box: tma_boxes.cuh, fs_tma_h_tail_rows).
#define FS_TMA_KERNEL_PARAMS                                                                                 \
  const fs_fused_params p, const __grid_constant__ fs_tmap tmap_w, const __grid_constant__ fs_tmap tmap_h, \
      const __grid_constant__ fs_tmap tmap_ht

// Expect `bytes` more transaction bytes on the barrier and arrive once.
__device__ __forceinline__ void fs_mbar_arrive_expect_tx(fs_u64* bar, unsigned bytes) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(
                   fs_smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

// L2 policies for the copies: W is streamed once (evict first), H is read by
// every block (evict last).
__device__ __forceinline__ fs_u64 fs_l2_policy_evict_first() {
  fs_u64 p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(p));
  return p;
}
__device__ __forceinline__ fs_u64 fs_l2_policy_evict_last() {
  fs_u64 p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(p));
  return p;
}

__device__ __forceinline__ void fs_tma_prefetch_map(const fs_tmap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<fs_u64>(map)) : "memory");
}

// Box at element column `col`, row `row` of the map's tensor into shared
// memory at `dst` (1024-byte aligned for the 128-byte swizzle).
__device__ __forceinline__ void fs_tma_load_2d(void* dst, const fs_tmap* map, int col, int row, fs_u64* bar,
                                               fs_u64 policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(fs_smem_addr(dst)),
      "l"(reinterpret_cast<fs_u64>(map)), "r"(col), "r"(row), "r"(fs_smem_addr(bar)), "l"(policy)
      : "memory");
}

// Makes initialised mbarriers visible to the copy engine (async proxy)
// before the first bulk copy names them.
__device__ __forceinline__ void fs_mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
