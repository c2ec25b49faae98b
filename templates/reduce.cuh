// reduce.cuh: the end of every fused launch. The tiles already folded their
// winners into p.best (atomic max of packed candidates); the last block to
// finish writes each (row, sample)'s index and zeroes p.best and p.done for
// the next launch. Rows with an
// invalid temperature (negative, NaN, inf, positive below 2^-64) or no
// candidate (all scores NaN) get index -1.
#pragma once
#include "fs_params.cuh"

// Called by every thread of every block, after its last tile.
__device__ __forceinline__ void fs_grid_finish(const fs_fused_params& p) {
  __threadfence();  // this thread's atomics are visible before the ticket
  __syncthreads();
  bool last = false;
  if (threadIdx.x == 0) last = atomicAdd(p.done, 1u) == gridDim.x - 1;
  if (!__syncthreads_or(last)) return;
  __threadfence();
  const fs_i64 items = p.rows * p.num_samples;  // item = n * S + s
  for (fs_i64 i = threadIdx.x; i < items; i += blockDim.x) {
    const fs_u64 key = atomicExch(p.best + i, 0ull);  // read from L2 and reset
    const int bi = key ? fs_candidate_index(key) : FS_NO_INDEX;
    const bool valid = fs_temperature_valid(fs_row_temperature(p.row, i / p.num_samples));
    const fs_i64 result = (valid && bi != FS_NO_INDEX) ? (fs_i64)bi : (fs_i64)-1;
    if (p.out_is_int64) static_cast<fs_i64*>(p.out)[i] = result;
    else static_cast<int*>(p.out)[i] = (int)result;
  }
  if (threadIdx.x == 0) atomicExch(p.done, 0u);
}
