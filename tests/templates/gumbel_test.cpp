// gumbel_test.cpp: the host build of templates/gumbel.cuh (the same code the
// kernels run, with explicit rounding). Checks are against independent
// double-precision math (std::log) and closed-form facts about the Gumbel
// distribution, never against values produced by the code under test.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <random>

#include "templates/gumbel.cuh"
#include "templates/philox.cuh"

namespace {

constexpr double kEulerGamma = 0.57721566490153286061;
constexpr double kPi = 3.14159265358979323846;
constexpr std::uint32_t kLevels = 1u << 23;  // distinct uniforms: the top 23 bits of a word

float float_from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// |approx - log(x)| in units of the fp32 ulp of the exact result.
double log_ulp_error(float x, float approx) {
  const double exact = std::log(double(x));
  if (exact == 0.0) return approx == 0.0f ? 0.0 : INFINITY;
  const double ulp = std::ldexp(1.0, std::max(std::ilogb(exact), -126) - 23);
  return std::fabs(double(approx) - exact) / ulp;
}

// ---------------------------------------------------------------- uniforms

TEST(Uniform, EqualsMidpointOfTop23Bits) {
  std::mt19937 rng(1);
  for (std::uint32_t k = 0; k < kLevels; ++k) {
    const double expected = (double(k) + 0.5) * std::ldexp(1.0, -23);  // exact in fp32 too
    const std::uint32_t low = rng() & 0x1ffu;                        // the low 9 bits are ignored
    const float u = fs_uniform_from_bits((k << 9) | low);
    if (double(u) != expected) FAIL() << "k=" << k << " low=" << low << " u=" << u << " expected " << expected;
  }
}

TEST(Uniform, StrictlyInsideOpenUnitInterval) {
  const float lo = fs_uniform_from_bits(0u), hi = fs_uniform_from_bits(0xffffffffu);
  EXPECT_GT(lo, 0.0f);
  EXPECT_LT(hi, 1.0f);
  EXPECT_EQ(double(lo), std::ldexp(1.0, -24));
  EXPECT_EQ(double(hi), 1.0 - std::ldexp(1.0, -24));
  std::mt19937 rng(2);
  for (int i = 0; i < 1000000; ++i) {
    const float u = fs_uniform_from_bits(rng());
    ASSERT_GT(u, 0.0f);
    ASSERT_LT(u, 1.0f);
  }
}

// --------------------------------------------------------------------- log

TEST(Log, ExactAtOneAndPowersOfTwo) {
  EXPECT_EQ(fs_log(1.0f), 0.0f);
  for (int e = -126; e <= 127; ++e) {
    const float x = std::ldexp(1.0f, e);
    EXPECT_LE(log_ulp_error(x, fs_log(x)), 2.0) << "x = 2^" << e;
  }
}

// Every input the first log sees: the 2^23 uniforms.
TEST(Log, WithinTwoUlpOnEveryUniform) {
  double worst = 0;
  float worst_x = 0;
  for (std::uint32_t k = 0; k < kLevels; ++k) {
    const float x = fs_uniform_from_bits(k << 9);
    const double e = log_ulp_error(x, fs_log(x));
    if (e > worst) worst = e, worst_x = x;
  }
  EXPECT_LE(worst, 2.0) << "at x = " << worst_x;
}

// Every input the second log sees: t = -log(u) for the 2^23 uniforms.
TEST(Log, WithinTwoUlpOnEveryFirstStageOutput) {
  double worst = 0;
  float worst_x = 0;
  for (std::uint32_t k = 0; k < kLevels; ++k) {
    const float t = -fs_log(fs_uniform_from_bits(k << 9));
    ASSERT_GT(t, 0.0f) << "k=" << k;
    ASSERT_GE(t, FLT_MIN) << "k=" << k << ": subnormal input to the second log";
    const double e = log_ulp_error(t, fs_log(t));
    if (e > worst) worst = e, worst_x = t;
  }
  EXPECT_LE(worst, 2.0) << "at x = " << worst_x;
}

// Dense sweeps over bit patterns (a prime stride visits every binade and
// varied mantissas): [2^-24, 1) and the normal floats of (0, 17].
TEST(Log, WithinTwoUlpOnDenseSweeps) {
  struct Range {
    std::uint32_t first, last, stride;
  };
  const Range ranges[] = {
      {0x33800000u /* 2^-24 */, 0x3f7fffffu /* 1 - 2^-24 */, 13},
      {0x00800000u /* FLT_MIN */, 0x41880000u /* 17 */, 211},
  };
  for (const Range& r : ranges) {
    double worst = 0;
    float worst_x = 0;
    for (std::uint64_t b = r.first; b <= r.last; b += r.stride) {
      const float x = float_from_bits(std::uint32_t(b));
      const double e = log_ulp_error(x, fs_log(x));
      if (e > worst) worst = e, worst_x = x;
    }
    const float last = float_from_bits(r.last);
    worst = std::max(worst, log_ulp_error(last, fs_log(last)));
    EXPECT_LE(worst, 2.0) << "at x = " << worst_x << " (range ending at " << last << ")";
  }
}

TEST(Log, WithinTwoUlpOnRandomNormalFloats) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<std::uint32_t> bits(0x00800000u, 0x7f7fffffu);  // every positive normal float
  double worst = 0;
  float worst_x = 0;
  for (int i = 0; i < 1000000; ++i) {
    const float x = float_from_bits(bits(rng));
    const double e = log_ulp_error(x, fs_log(x));
    if (e > worst) worst = e, worst_x = x;
  }
  EXPECT_LE(worst, 2.0) << "at x = " << worst_x;
}

// ------------------------------------------------------------------ gumbel

TEST(Gumbel, MatchesDoublePrecisionFormula) {
  // -log(-log(u)) in double from the exact uniform; the fp32 pipeline loses at
  // most a few fp32 ulps of t, which -log amplifies by 1/t relative... i.e.
  // absolute error ~ few * 2^-24 * (1 + |g|).
  for (std::uint32_t k = 0; k < kLevels; k += 7) {
    const double u = (double(k) + 0.5) * std::ldexp(1.0, -23);
    const double g = -std::log(-std::log(u));
    const float got = fs_gumbel_from_bits(k << 9);
    ASSERT_NEAR(got, g, 4 * std::ldexp(1.0, -24) * (1 + std::fabs(g))) << "k=" << k;
  }
}

TEST(Gumbel, MonotoneInTopBitsAndExtremesAtTheEnds) {
  float prev = fs_gumbel_from_bits(0u);
  float lo = prev, hi = prev;
  for (std::uint32_t k = 1; k < kLevels; ++k) {
    const float g = fs_gumbel_from_bits(k << 9);
    if (!(g >= prev)) FAIL() << "not monotone at k=" << k << ": " << prev << " then " << g;
    if (fs_gumbel_from_bits((k << 9) | 0x1ffu) != g) FAIL() << "low 9 bits changed the noise at k=" << k;
    lo = std::min(lo, g);
    hi = std::max(hi, g);
    prev = g;
  }
  const float at_min = fs_gumbel_from_bits(0u), at_max = fs_gumbel_from_bits((kLevels - 1) << 9);
  EXPECT_EQ(lo, at_min);
  EXPECT_EQ(hi, at_max);
  EXPECT_EQ(at_max, fs_gumbel_from_bits(0xffffffffu));
  // The closed-form extremes, -log(-log(u)) at u = 1 - 2^-24 and u = 2^-24.
  EXPECT_NEAR(at_max, -std::log(-std::log1p(-std::ldexp(1.0, -24))), 1e-5);
  EXPECT_NEAR(at_min, -std::log(24 * std::log(2.0)), 1e-5);
}

TEST(Gumbel, BoundMacrosEncloseTheNoise) {
  const float at_min = fs_gumbel_from_bits(0u), at_max = fs_gumbel_from_bits(0xffffffffu);
  EXPECT_LE(at_max, FS_GUMBEL_MAX) << std::setprecision(10) << "FS_GUMBEL_MAX (" << FS_GUMBEL_MAX
                                   << ") is below the largest noise value " << at_max;
  EXPECT_GE(at_min, FS_GUMBEL_MIN) << std::setprecision(10) << "FS_GUMBEL_MIN (" << FS_GUMBEL_MIN
                                   << ") is above the smallest noise value " << at_min;
  EXPECT_LE(double(FS_GUMBEL_MAX) - at_max, 1e-3) << "FS_GUMBEL_MAX is a loose bound";
  EXPECT_LE(at_min - double(FS_GUMBEL_MIN), 1e-3) << "FS_GUMBEL_MIN is a loose bound";
}

// ----------------------------------------------- bias of the noise (exact)
//
// Averaging g over all 2^23 midpoints u_k = (k + 1/2) 2^-23 is the midpoint
// rule for  integral_0^1 -log(-log u) du = gamma  (Euler-Mascheroni). Its
// error comes from the logarithmic singularity at u -> 1, where the integrand
// is ~ -log(1-u): the midpoint rule misses (1 - ln 2) h there (h = 2^-23),
// i.e. about 3.7e-8; the u -> 0 end contributes less. So:
//   (a) the exact-arithmetic midpoint mean (double, std::log) is within 5e-8
//       of gamma;
//   (b) the fp32 noise's mean is within 1e-9 of (a): unbiased fp32 rounding
//       errors (<= 1 ulp, ~1e-7 each) average out to ~1e-7 / sqrt(2^23) ~
//       3e-11 over 2^23 values, so 1e-9 leaves a 30x margin and flags any
//       systematic bias of the log of ~1e-9 or more.

using LogFn = float (*)(float);

double fp32_noise_mean(LogFn log_fn) {
  long double sum = 0;
  for (std::uint32_t k = 0; k < kLevels; ++k) {
    const float u = fs_uniform_from_bits(k << 9);
    sum += -log_fn(-log_fn(u));
  }
  return double(sum / kLevels);
}

double exact_midpoint_mean_uncached() {
  long double sum = 0;
  for (std::uint32_t k = 0; k < kLevels; ++k) {
    const double u = (double(k) + 0.5) * std::ldexp(1.0, -23);
    sum += -std::log(-std::log(u));
  }
  return double(sum / kLevels);
}

double exact_midpoint_mean() {
  static const double mean = exact_midpoint_mean_uncached();
  return mean;
}

constexpr double kQuadratureBound = 5e-8;
constexpr double kBiasBound = 1e-9;

// A line-by-line copy of fs_log with two coefficients that a test can
// perturb, to show the bias checks catch a slightly wrong polynomial.
float g_c3 = 3.3333331174e-1f;
float g_half = -0.5f;
float perturbable_log(float x) {
  fs_u32 bits = fs_float_bits(x);
  int e = (int)((bits >> 23) & 0xffu) - 127;
  bits = (bits & 0x007fffffu) | 0x3f800000u;
  if (bits > 0x3fb504f3u) {
    bits -= 0x00800000u;
    e += 1;
  }
  const float f = fs_bits_float(bits) - 1.0f;
  const float z = f * f;
  float p = 7.0376836292e-2f;
  p = std::fmaf(p, f, -1.1514610310e-1f);
  p = std::fmaf(p, f, 1.1676998740e-1f);
  p = std::fmaf(p, f, -1.2420140846e-1f);
  p = std::fmaf(p, f, 1.4249322787e-1f);
  p = std::fmaf(p, f, -1.6668057665e-1f);
  p = std::fmaf(p, f, 2.0000714765e-1f);
  p = std::fmaf(p, f, -2.4999993993e-1f);
  p = std::fmaf(p, f, g_c3);
  const float fe = (float)e;
  float y = (f * z) * p;
  y = std::fmaf(fe, -2.12194440e-4f, y);
  y = std::fmaf(z, g_half, y);
  float r = f + y;
  r = std::fmaf(fe, 0.693359375f, r);
  return r;
}

struct Coefficients {
  float c3, half;
  Coefficients(float c3_, float half_) : c3(g_c3), half(g_half) { g_c3 = c3_, g_half = half_; }
  ~Coefficients() { g_c3 = c3, g_half = half; }
};

TEST(GumbelBias, MeanOfAllLevelsIsEulerGamma) {
  const double exact = exact_midpoint_mean();
  EXPECT_NEAR(exact, kEulerGamma, kQuadratureBound) << "midpoint rule in double";
  const double mean = fp32_noise_mean(fs_log);
  EXPECT_NEAR(mean, exact, kBiasBound) << "fp32 noise is biased";
  EXPECT_NEAR(mean, kEulerGamma, kQuadratureBound + kBiasBound);
  // The same mean through fs_gumbel_from_bits itself.
  long double sum = 0;
  for (std::uint32_t k = 0; k < kLevels; ++k) sum += fs_gumbel_from_bits(k << 9);
  EXPECT_EQ(double(sum / kLevels), mean);
}

TEST(GumbelBias, PerturbedLogIsCaught) {
  // The copy is faithful: bit-identical to fs_log with the real coefficients.
  for (std::uint32_t b = 0x00800000u; b <= 0x41880000u; b += 1009)
    ASSERT_EQ(fs_float_bits(perturbable_log(float_from_bits(b))), fs_float_bits(fs_log(float_from_bits(b))))
        << float_from_bits(b);
  const double exact = exact_midpoint_mean();
  {
    // f^3 coefficient off by 1e-5 relative: the log is off by up to ~9 ulp,
    // the noise mean by ~6e-9.
    Coefficients c(3.3333331174e-1f * 1.00001f, -0.5f);
    EXPECT_GT(std::fabs(fp32_noise_mean(perturbable_log) - exact), kBiasBound);
    double worst = 0;
    for (std::uint32_t k = 0; k < kLevels; k += 3) {
      const float u = fs_uniform_from_bits(k << 9);
      worst = std::max(worst, log_ulp_error(u, perturbable_log(u)));
    }
    EXPECT_GT(worst, 2.0);
  }
  {
    // The f^2/2 term off by 2e-5 relative: noise mean off by ~4e-7, so even
    // the end-to-end comparison with gamma fails.
    Coefficients c(3.3333331174e-1f, -0.49999f);
    EXPECT_GT(std::fabs(fp32_noise_mean(perturbable_log) - kEulerGamma), kQuadratureBound + kBiasBound);
  }
}

// --------------------------------------- Philox-driven noise statistics
//
// 2^22 consecutive vocabulary indices of one (seed, offset, sample): mean
// gamma and variance pi^2/6, within 5 standard errors (Gumbel: variance
// pi^2/6, excess kurtosis 12/5).

TEST(GumbelBias, PhiloxNoiseHasGumbelMoments) {
  constexpr std::uint64_t n = 1ull << 22;
  long double sum = 0, sum2 = 0;
  for (std::uint64_t v = 0; v < n; v += 4) {
    const fs_philox_ctr r = fs_noise_block(0x5eed, 17, v, 0);
    for (int j = 0; j < 4; ++j) {
      const double g = fs_gumbel_from_bits(r.v[j]);
      sum += g;
      sum2 += g * g;
    }
  }
  const double mean = double(sum / n);
  const double var = double(sum2 / n) - mean * mean;
  const double sigma2 = kPi * kPi / 6;
  const double se_mean = std::sqrt(sigma2 / n);
  const double se_var = sigma2 * std::sqrt((12.0 / 5.0 + 2.0) / n);
  EXPECT_NEAR(mean, kEulerGamma, 5 * se_mean);
  EXPECT_NEAR(var, sigma2, 5 * se_var);
}

}  // namespace
