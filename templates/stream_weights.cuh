// stream_weights.cuh: the bandwidth floor. Reads every byte of W once with
// 16-byte loads that bypass L1 (several in flight per thread) and folds them
// into one word per block, so nothing can be optimized away.
#pragma once
#include "fs_types.cuh"

#define FS_STREAM_UNROLL 8

extern "C" __global__ void __launch_bounds__(256) fs_stream_kernel(const uint4* __restrict__ w, fs_i64 n16,
                                                                    fs_u32* __restrict__ sink) {
  fs_u32 acc = 0;
  const fs_i64 stride = (fs_i64)gridDim.x * blockDim.x;
  fs_i64 i = (fs_i64)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + (FS_STREAM_UNROLL - 1) * stride < n16; i += FS_STREAM_UNROLL * stride) {
    uint4 v[FS_STREAM_UNROLL];
#pragma unroll
    for (int u = 0; u < FS_STREAM_UNROLL; ++u) {
      asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                   : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                   : "l"(w + i + u * stride));
    }
#pragma unroll
    for (int u = 0; u < FS_STREAM_UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n16; i += stride) {
    const uint4 v = w[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  acc = __reduce_xor_sync(0xffffffffu, acc);
  if ((threadIdx.x & 31) == 0) atomicXor(sink + blockIdx.x, acc);
}
