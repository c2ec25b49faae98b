// gumbel_bound.cuh: a fast approximation of the noise with a proven error
// bound. The epilogue uses it only to decide which values cannot win; every
// value that might win gets its exact noise (fs_token_gumbel), so samples
// do not change (docs/rng.md section 6).
#pragma once
#include "gumbel_race.cuh"

// |fs_gumbel_approx(w) - fs_gumbel_from_bits(w)| <= FS_GUMBEL_APPROX_ERR for
// every 32-bit word w, and the same for fs_token_gumbel_approx against
// fs_token_gumbel (gumbel_race.cuh). The analysis (docs/rng.md section 6) gives about 1.1e-5; the
// GPU test GumbelBound.ExhaustiveOverAllUniforms checks all 2^23 uniforms on
// the machine it runs on against this constant.
#define FS_GUMBEL_APPROX_ERR 1e-4f

#if defined(__CUDACC__)
// -log(-log(u)) with the SFU's lg2.approx. E = -log(u) would lose its relative
// accuracy near u = 1 (lg2.approx has an absolute error there), so for
// 1 - u < 2^-6 it comes from the series f + f^2/2 + f^3/3 (f = 1 - u, exact),
// whose relative error is below f^3/4.
// lg2.approx without the denormal fix-up __log2f carries when the compiler
// does not flush denormals: every argument here is a normal float (u >= 2^-24,
// E >= 2^-24), for which the .ftz form gives the same result.
__device__ __forceinline__ float fs_lg2_approx_normal(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// -log(u) of a word, approximately (the exponential of fs_exp1_from_bits).
__device__ __forceinline__ float fs_exp1_approx(fs_u32 word) {
  const float u = fs_uniform_from_bits(word);
  const float f = __fadd_rn(1.0f, -u);  // exact: u is a multiple of 2^-24
  const float series = __fmul_rn(f, __fmaf_rn(f, __fmaf_rn(f, 0.333333343f, 0.5f), 1.0f));
  return f < 0.015625f ? series : __fmul_rn(-0.693147182f, fs_lg2_approx_normal(u));
}

// -log(-log(u)): the approximate fs_gumbel_from_bits.
__device__ __forceinline__ float fs_gumbel_approx(fs_u32 word) {
  return __fmul_rn(-0.693147182f, fs_lg2_approx_normal(fs_exp1_approx(word)));
}

// The approximate fs_token_gumbel (gumbel_race.cuh): a_approx is
// 0.0625 * fs_exp1_approx(group word), lead whether the token is the group's
// lead. e >= 3.7e-9 is a normal float. Its error: e~ has the relative error
// of fs_exp1_approx (a sum of two positive terms with that error), and the
// outer lg2 adds its own, so |g~ - g| stays below the single-word bound plus
// 2^-22 ln 2 |log2 e| (docs/rng.md section 6; GPU test GumbelBound.*).
// SELECT makes the token's exponential whether or not it is the lead and
// then chooses: the same value, but a select where the default form may
// compile to a branch around fs_exp1_approx (which code is faster depends on
// the caller: session 46's register-epilogue take-up).
template <bool SELECT = false>
__device__ __forceinline__ float fs_token_gumbel_approx(float a_approx, fs_u32 word, bool lead) {
  float e;
  if constexpr (SELECT) {
    const float x = fs_exp1_approx(word);
    e = lead ? a_approx : __fadd_rn(a_approx, x);
  } else {
    e = lead ? a_approx : __fadd_rn(a_approx, fs_exp1_approx(word));
  }
  return __fmul_rn(-0.693147182f, fs_lg2_approx_normal(e));
}

// The approximate noise of a group's lead: fs_token_gumbel_approx of the lead
// (e = a~ = E~(u_G) / 16), within FS_GUMBEL_APPROX_ERR of its exact noise
// -fs_log(a) (GPU test GumbelBound.GroupRaceOverAllGroupUniforms, slot 0: all
// 2^23 group levels). Two SFU logarithms instead of two fs_logs.
__device__ __forceinline__ float fs_group_lead_approx(fs_u32 group_word) {
  return fs_token_gumbel_approx(__fmul_rn(0.0625f, fs_exp1_approx(group_word)), 0u, true);
}

// Half-width of the interval around an approximate score st = fma(l, w, G~)
// that holds the exact score fma(l, w, G): |G - G~| <= FS_GUMBEL_APPROX_ERR
// plus both roundings (<= 2^-24 |score| each), with room for the rounding of
// st +- margin itself. NaN/inf in, NaN/inf out (callers treat those as
// "may win").
__device__ __forceinline__ float fs_score_margin(float st) {
  return __fmaf_rn(fabsf(st), 4.76837158203125e-07f /* 2^-21 */, 2.0f * FS_GUMBEL_APPROX_ERR);
}

#endif

// Host and device (the CPU tests check the rules built on it).
// Pruning threshold for a lower bound B on a row's final best score: a value
// whose approximate score st = fma(l, w, G~) is below it has an exact score
// below B, so it can neither win nor tie (docs/rng.md section 6 has the
// proof: |exact - st| <= eps + 2^-23 max(|exact|, |st|), and B - threshold >=
// 2^-19 |B| + 4 eps up to its own roundings). B = +inf gives NaN and B = -inf
// gives -inf: nothing compares below either.
FS_HD float fs_prune_threshold(float bound) {
  return FS_FADD(bound, -FS_FMA(fabsf(bound), 1.9073486328125e-06f /* 2^-19 */, 4.0f * FS_GUMBEL_APPROX_ERR));
}
