// fs_params.cuh: kernel parameter blocks, one definition for the host
// launcher and the generated kernels (passed by value).
#pragma once
#include "fs_types.cuh"

// Per-row sampling parameters. A null pointer means "use the scalar".
struct fs_row_params {
  const float* temperatures;  // [N] or null
  const fs_u64* seeds;        // [N] or null
  const fs_u64* offsets;      // [N] or null
  float temperature;
  fs_u32 pad0;
  fs_u64 seed;
  fs_u64 offset;
};

// Fused matmul + Gumbel-max tile kernel (and the materialized-logits variant).
struct fs_fused_params {
  const void* weights;   // [V, d] (or logits [N, V] fp32 for the logits variant)
  const void* hidden;    // [N, d]
  fs_i64 vocab;          // V
  fs_i64 rows;           // N
  fs_i64 hidden_dim;     // d
  fs_row_params row;
  int num_samples;       // S
  int num_vtiles;        // number of partial results per (row, sample)
  float* part_score;     // [S][N][num_vtiles]
  int* part_index;       // [S][N][num_vtiles]
};

// Reduction over the vocabulary tiles' partial winners.
struct fs_reduce_params {
  const float* part_score;
  const int* part_index;
  fs_i64 rows;
  int num_samples;
  int num_vtiles;
  fs_row_params row;
  void* out;          // [N][S] int64 or int32
  int out_is_int64;
  int pad0;
};

#if defined(__CUDACC__)
// Per-row parameter access on the device.
__device__ __forceinline__ float fs_row_temperature(const fs_row_params& p, fs_i64 n) {
  return p.temperatures ? p.temperatures[n] : p.temperature;
}
__device__ __forceinline__ fs_u64 fs_row_seed(const fs_row_params& p, fs_i64 n) {
  return p.seeds ? p.seeds[n] : p.seed;
}
__device__ __forceinline__ fs_u64 fs_row_offset(const fs_row_params& p, fs_i64 n) {
  return p.offsets ? p.offsets[n] : p.offset;
}
#endif

// Temperature classes: > 0 finite samples, == 0 is greedy, anything else
// (negative, NaN, inf) is invalid and yields index -1 for that row.
FS_HD bool fs_temperature_valid(float t) { return t >= 0.0f && t <= 3.40282346638528859812e+38f; }
