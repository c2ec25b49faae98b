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
__device__ __forceinline__ void fs_mbar_wait(fs_u64* bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred done;\n"
      "FS_MBAR_WAIT:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra FS_MBAR_WAIT;\n}\n" ::"r"(fs_smem_addr(bar)),
      "r"(parity)
      : "memory");
}

// Barrier `id` (1..15) among `threads` threads (a multiple of 32).
__device__ __forceinline__ void fs_named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
