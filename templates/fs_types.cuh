// fs_types.cuh: fixed-width types and host/device qualifiers shared by the
// generated kernels (compiled by NVRTC, which has no <cstdint>) and the host
// C++ code (CPU reference, parameter structs).
#pragma once

#if defined(__CUDACC__)
#define FS_HD __host__ __device__ __forceinline__
#else
#define FS_HD inline
#endif

typedef unsigned int fs_u32;
typedef unsigned long long fs_u64;
typedef long long fs_i64;
typedef unsigned short fs_u16;

static_assert(sizeof(fs_u32) == 4, "fs_u32 must be 32 bits");
static_assert(sizeof(fs_u64) == 8, "fs_u64 must be 64 bits");

// A float's bits and back (bit casts, no conversion).
#if defined(__CUDACC__)
FS_HD fs_u32 fs_float_bits(float x) { return __float_as_uint(x); }
FS_HD float fs_bits_float(fs_u32 b) { return __uint_as_float(b); }
#else
#include <cstring>
inline fs_u32 fs_float_bits(float x) { fs_u32 b; std::memcpy(&b, &x, 4); return b; }
inline float fs_bits_float(fs_u32 b) { float x; std::memcpy(&x, &b, 4); return x; }
#endif
