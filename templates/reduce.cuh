// reduce.cuh: picks each (row, sample)'s winner among the vocabulary tiles'
// partial winners. One warp per (row, sample). Ties go to the lower index.
// Rows with an invalid temperature (negative, NaN, inf) or no finite-or-inf
// candidate (all scores NaN) get index -1.
#pragma once
#include "fs_params.cuh"
#include "epilogue.cuh"

extern "C" __global__ void __launch_bounds__(128) fs_reduce_kernel(const fs_reduce_params p) {
  const fs_i64 item = (fs_i64)blockIdx.x * 4 + (threadIdx.x >> 5);  // = n * S + s
  const int lane = threadIdx.x & 31;
  if (item >= p.rows * p.num_samples) return;
  const fs_i64 n = item / p.num_samples;
  const int s = (int)(item % p.num_samples);
  const fs_i64 base = ((fs_i64)s * p.rows + n) * p.num_vtiles;
  float best = -__int_as_float(0x7f800000);
  int bi = FS_NO_INDEX;
  for (int t = lane; t < p.num_vtiles; t += 32) {
    const float sc = p.part_score[base + t];
    const int ix = p.part_index[base + t];
    if (fs_better(sc, ix, best, bi)) { best = sc; bi = ix; }
  }
  fs_warp_argmax(best, bi);
  if (lane == 0) {
    const bool valid = fs_temperature_valid(fs_row_temperature(p.row, n));
    const fs_i64 result = (valid && bi != FS_NO_INDEX) ? (fs_i64)bi : (fs_i64)-1;
    if (p.out_is_int64) static_cast<fs_i64*>(p.out)[item] = result;
    else static_cast<int*>(p.out)[item] = (int)result;
  }
}
