// noise_skip.cuh: a test on the Philox word alone that rules a value out
// before its noise is approximated (wgmma_coop's epilogue, epilogue_owner.cuh).
// The noise G(u) = -log(-log u) grows with u, and u grows with the word's top
// 23 bits k: u = (k + 1/2) 2^-23. For a batch of values with logits <= lmax
// and a pruning threshold T (gumbel_bound.cuh), a value can reach T only if
// G(u) >= T - lmax / tau, i.e. u >= exp(-exp(-(T - lmax / tau))). So every
// word below fs_noise_skip_word(T, lmax, 1 / tau) gives an approximate score
// below T: the value is not a survivor, and one compare of the word replaces
// the two SFU logarithms. Once the row's bound B is well above the logits,
// that is nearly every value (B - l = 10: about 5e-5 of the words pass).
// docs/rng.md section 6 has the proof of the margins; one definition for the
// kernel and the host test (tests/templates/noise_skip_test.cpp).
#pragma once
#include "gumbel.cuh"
#include "gumbel_bound.cuh"
#include "gumbel_race.cuh"

FS_HD float fs_exp2_approx(float x) {
#if defined(__CUDACC__)
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return std::exp2(x);
#endif
}

FS_HD float fs_abs(float x) { return fs_bits_float(fs_float_bits(x) & 0x7fffffffu); }

// The smallest word whose noise may lift a value with logit <= lmax (scaled
// by inv_tau > 0) to the threshold thr; 0 (skip nothing) when NaN or an
// infinity is involved or nothing can be ruled out.
FS_HD fs_u32 fs_noise_skip_word(float thr, float lmax, float inv_tau) {
  const float p = FS_FMUL(lmax, inv_tau);
  // y_c = thr - p - slack: the slack covers |G~ - G| + |G - G_real| (< 2 eps,
  // tests) and every rounding between the real-number bound and the fp32 score.
  const float slack = FS_FMA(FS_FADD(fs_abs(thr), fs_abs(p)), 9.5367431640625e-07f /* 2^-20 */,
                             4.0f * FS_GUMBEL_APPROX_ERR);
  const float yc = FS_FADD(FS_FADD(thr, -p), -slack);
  // 1 - exp(-exp(-y_c)) <= exp(-y_c) = 2^(-y_c log2 e): the share of uniforms
  // that may pass, over-estimated by 1.001 for ex2.approx and the roundings
  // (a flushed denormal is below 2^-126, far under one level 2^-23).
  const float e = FS_FMUL(fs_exp2_approx(FS_FMUL(yc, -1.44269502f)), 1.001f);
  const float d = e < 1.0f ? e : 1.0f;  // NaN -> 1: skip nothing
  const float levels = FS_FMUL(d, 8388608.0f /* 2^23 */);  // exact: a power of two, at most 2^23
  int top = (int)levels;
  top += (float)top < levels;  // ceil(levels)
  // Levels k < 2^23 - top - 1 have u <= 1 - (top + 3/2) 2^-23 < 1 - d.
  const int k = 8388608 - top - 1;
  return k > 0 ? (fs_u32)k << 9 : 0u;
}

// The same test on a group word (gumbel_race.cuh): every token of the group
// has noise at most the lead's, -log(a) = G(u_G) + log 16 up to a few ulp,
// so a group word below this word gives each of the group's 16 values
// (logits <= lmax) an approximate score below thr (docs/rng.md section 6).
FS_HD fs_u32 fs_group_skip_word(float thr, float lmax, float inv_tau) {
  return fs_noise_skip_word(FS_FADD(thr, -FS_LOG_GROUP), lmax, inv_tau);
}
