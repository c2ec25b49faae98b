// pipeline.cuh: cp.async helpers (sm_80+) for multi-stage shared-memory tiles.
#pragma once
#include "fs_types.cuh"

__device__ __forceinline__ unsigned fs_smem_addr(const void* p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

// 16-byte asynchronous global->shared copy; zero-fills when !pred.
__device__ __forceinline__ void fs_cp_async16(void* smem, const void* gmem, bool pred) {
  const int src_bytes = pred ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(fs_smem_addr(smem)), "l"(gmem),
               "r"(src_bytes)
               : "memory");
}

__device__ __forceinline__ void fs_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int N>
__device__ __forceinline__ void fs_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
