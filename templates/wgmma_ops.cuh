// wgmma_ops.cuh: the Hopper warpgroup-MMA primitives shared by the wgmma
// kernels (sm_90a): shared-memory matrix descriptors for K-major tiles with the
// 128-byte swizzle, and the fence / commit / wait of asynchronous MMAs.
#pragma once
#include "fs_types.cuh"

// Shared-memory matrix descriptor: K-major, 128-byte swizzle, 8-row groups
// 1024 bytes apart (stride byte offset), leading byte offset unused (1).
__device__ __forceinline__ fs_u64 fs_wgmma_desc(unsigned smem_addr) {
  fs_u64 d = (fs_u64)((smem_addr & 0x3FFFF) >> 4);
  d |= (fs_u64)1 << 16;
  d |= (fs_u64)(1024 >> 4) << 32;
  d |= (fs_u64)1 << 62;
  return d;
}

__device__ __forceinline__ void fs_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void fs_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void fs_wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
// Orders the cp.async (generic proxy) writes of a stage before the tensor
// cores' (async proxy) reads of it.
__device__ __forceinline__ void fs_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
