// mbarrier.cuh: shared-memory transaction barriers (sm_80+ for cp.async
// completion, sm_90 for try_wait) that hand pipeline stages between the
// producer and consumer warps of a warp-specialized kernel.
#pragma once
#include "pipeline.cuh"

__device__ __forceinline__ void fs_mbar_init(fs_u64* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(fs_smem_addr(bar)), "r"(count) : "memory");
}

// One arrival of this thread.
__device__ __forceinline__ void fs_mbar_arrive(fs_u64* bar) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(fs_smem_addr(bar))
               : "memory");
}

// One arrival of this thread once all its earlier cp.async copies have landed
// (counted against the barrier's expected arrivals: "noinc").
__device__ __forceinline__ void fs_mbar_arrive_cp_async(fs_u64* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(fs_smem_addr(bar)) : "memory");
}

// Blocks until the barrier's phase with this parity has completed.
__device__ __forceinline__ void fs_mbar_wait(fs_u64* bar, unsigned parity, long long tag = -1) {
  unsigned done = 0;
#ifdef FS_DEBUG_HANG
  long long spins = 0;
#endif
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(fs_smem_addr(bar)), "r"(parity)
        : "memory");
#ifdef FS_DEBUG_HANG
    if (!done && ++spins == (1ll << 22)) {
      if ((threadIdx.x & 31) == 0)
        printf("fs_mbar_wait stuck: block %d warp %d barrier smem %u parity %u tag %lld\n", blockIdx.x,
               threadIdx.x >> 5, fs_smem_addr(bar), parity, tag);
      __trap();
    }
#endif
  } while (!done);
}

// Barrier `id` (1..15) among `threads` threads (a multiple of 32).
__device__ __forceinline__ void fs_named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
