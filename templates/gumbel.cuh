// gumbel.cuh: uniform and Gumbel noise from Philox words, bit-identical on
// host and device. Every floating-point step is an explicitly rounded
// operation (fmaf, or a mul/add that the device compiler may not contract),
// so the CPU reference reproduces the GPU's noise exactly.
#pragma once
#include "fs_types.cuh"

#if defined(__CUDACC__)
#define FS_FMUL(a, b) __fmul_rn((a), (b))
#define FS_FADD(a, b) __fadd_rn((a), (b))
#define FS_FMA(a, b, c) __fmaf_rn((a), (b), (c))
#else
#include <cmath>
#define FS_FMUL(a, b) ((float)(a) * (float)(b))
#define FS_FADD(a, b) ((float)(a) + (float)(b))
#define FS_FMA(a, b, c) std::fmaf((a), (b), (c))
#endif

// Uniform in (0, 1): the top 23 bits k of a Philox word give (k + 0.5) * 2^-23,
// exactly representable in fp32, so u lies in [2^-24, 1 - 2^-24].
FS_HD float fs_uniform_from_bits(fs_u32 word) {
  const float k = (float)(word >> 9);  // exact: < 2^23
  return FS_FMA(k, 1.1920928955078125e-07f /* 2^-23 */, 5.9604644775390625e-08f /* 2^-24 */);
}

// Natural logarithm of a positive normal float, ~1 ulp. Range reduction to
// m in [sqrt(1/2), sqrt(2)), then log(1+f) = f - f^2/2 + f^3 P(f) with the
// Cephes single-precision minimax coefficients, and e*ln2 split in two parts.
FS_HD float fs_log(float x) {
  fs_u32 bits = fs_float_bits(x);
  int e = (int)((bits >> 23) & 0xffu) - 127;
  bits = (bits & 0x007fffffu) | 0x3f800000u;  // m in [1, 2)
  if (bits > 0x3fb504f3u) {                    // m > sqrt(2): use m/2, e+1
    bits -= 0x00800000u;
    e += 1;
  }
  const float f = FS_FADD(fs_bits_float(bits), -1.0f);  // exact (Sterbenz)
  const float z = FS_FMUL(f, f);
  float p = 7.0376836292e-2f;
  p = FS_FMA(p, f, -1.1514610310e-1f);
  p = FS_FMA(p, f, 1.1676998740e-1f);
  p = FS_FMA(p, f, -1.2420140846e-1f);
  p = FS_FMA(p, f, 1.4249322787e-1f);
  p = FS_FMA(p, f, -1.6668057665e-1f);
  p = FS_FMA(p, f, 2.0000714765e-1f);
  p = FS_FMA(p, f, -2.4999993993e-1f);
  p = FS_FMA(p, f, 3.3333331174e-1f);
  const float fe = (float)e;
  float y = FS_FMUL(FS_FMUL(f, z), p);      // f^3 P(f)
  y = FS_FMA(fe, -2.12194440e-4f, y);       // e * ln2_lo
  y = FS_FMA(z, -0.5f, y);                  // - f^2 / 2
  float r = FS_FADD(f, y);
  r = FS_FMA(fe, 0.693359375f, r);          // e * ln2_hi (exact product)
  return r;
}

// Standard Gumbel noise -log(-log(u)) from one Philox word.
FS_HD float fs_gumbel_from_bits(fs_u32 word) {
  const float u = fs_uniform_from_bits(word);
  const float t = -fs_log(u);  // in (0, 16.7]
  return -fs_log(t);
}

// Bounds of the noise over all 2^32 words: fs_gumbel_from_bits is monotone
// in u, so its extremes are at u = 1 - 2^-24 and u = 2^-24. Tests check these.
#define FS_GUMBEL_MAX 16.6356f
#define FS_GUMBEL_MIN -2.8117f
