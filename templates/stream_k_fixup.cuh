// stream_k_fixup.cuh: how the consumers of wgmma_coop "sk" specs hand a cut
// tile's partial sums from the tail's block to the head's (stream_k.cuh).
// Every one of the 256 consumer threads moves its own accumulators, laid out
// [accumulator][thread] in the block's slot of p.partials so that each store
// and load of a warp is 128 contiguous bytes. The handover is the
// flag-after-fence pattern: all threads store and fence, meet at a named
// barrier, and one thread raises the slot's flag; the head's block lowers
// the flag as it takes it (so the flags are zero again between launches, also
// under graph replay), fences, and only then do its threads load.
#pragma once
#include "fs_params.cuh"
#include "mbarrier.cuh"

#define FS_SK_BARRIER 1  // named barrier of the 256 consumer threads

// Tail: consumer thread ct writes its accumulators to slot `slot` and (ZERO)
// zeroes them (not needed where the next tile's first MMAs overwrite them:
// the register epilogue's k-loop; zeroing there spilled registers).
template <int MI, int NACC, bool ZERO = true>
__device__ __forceinline__ void fs_sk_put_partial(float (&acc)[MI][NACC], const fs_fused_params& p, int slot, int ct) {
  float* dst = p.partials + (fs_i64)slot * (MI * NACC * 256) + ct;
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NACC; ++j) {
      __stcg(dst + (i * NACC + j) * 256, acc[i][j]);
      if (ZERO) acc[i][j] = 0.0f;
    }
  __threadfence();
  fs_named_barrier(FS_SK_BARRIER, 256);
  if (ct == 0) atomicExch(p.sk_flags + slot, 1u);
}

// Head: waits until slot `slot` holds the tail's sums, then adds them to the accumulators.
template <int MI, int NACC>
__device__ __forceinline__ void fs_sk_add_partial(float (&acc)[MI][NACC], const fs_fused_params& p, int slot, int ct) {
  if (ct == 0) {
#ifdef FS_DEBUG_HANG
    long long spins = 0;  // like every mbarrier wait (mbarrier.cuh): report and trap instead of hanging
#endif
    while (atomicCAS(p.sk_flags + slot, 1u, 0u) != 1u) {
      __nanosleep(128);
#ifdef FS_DEBUG_HANG
      if (++spins == (1ll << 22)) {
        printf("fs_sk_add_partial stuck: block %d waits for slot %d\n", blockIdx.x, slot);
        __trap();
      }
#endif
    }
  }
  __threadfence();
  fs_named_barrier(FS_SK_BARRIER, 256);
  const float* src = p.partials + (fs_i64)slot * (MI * NACC * 256) + ct;
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NACC; ++j) acc[i][j] += __ldcg(src + (i * NACC + j) * 256);
}
