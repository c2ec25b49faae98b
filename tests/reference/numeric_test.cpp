// numeric_test.cpp: the host conversions of the 16-bit storage types
// (include/fusedsample/numeric.hpp, reference/numeric.cpp), which both sides
// of every CPU/GPU comparison use to make and read W and H. Every one of the
// 65536 bit patterns is decoded; encoding is checked at every value, every
// midpoint between neighbours (round to nearest, ties to even) and the
// floats beside them, against an independent rule: the compiler's _Float16
// for fp16, exact rounding in double for bf16.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "fusedsample/numeric.hpp"

namespace {

namespace fs = fusedsample;

std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

float float_of(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// bf16 pattern h by its fields, not by a shift.
double bf16_value(std::uint16_t h) {
  const int exp = (h >> 7) & 0xff, mant = h & 0x7f;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 0xff) return mant ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  if (exp == 0) return sign * std::ldexp(double(mant), -133);  // 2^-126 * mant / 2^7
  return sign * std::ldexp(double(mant | 0x80), exp - 134);
}

// Round x to bf16, nearest and ties to even, by comparing distances in double
// to the two bf16 neighbours of x (overflow: inf counts as 2^128, as IEEE 754
// rounds).
std::uint16_t bf16_round(float x) {
  const std::uint32_t b = bits_of(x);
  const std::uint16_t lo = std::uint16_t(b >> 16), hi = std::uint16_t(lo + 1);  // toward larger magnitude
  if ((b & 0xffffu) == 0) return lo;
  const double ax = std::fabs(double(x)), alo = std::fabs(bf16_value(lo));
  const double ahi = (hi & 0x7fff) == 0x7f80 ? std::ldexp(1.0, 128) : std::fabs(bf16_value(hi));
  const double dlo = ax - alo, dhi = ahi - ax;
  if (dlo < dhi) return lo;
  if (dhi < dlo) return hi;
  return (lo & 1) ? hi : lo;
}

TEST(Numeric, Bf16DecodesEveryPattern) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const double want = bf16_value(std::uint16_t(h));
    const float got = fs::bf16_to_float(std::uint16_t(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << h;
    } else {
      ASSERT_EQ(double(got), want) << std::hex << h;
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << std::hex << h;
    }
  }
}

TEST(Numeric, Bf16RoundsToNearestEven) {
  std::mt19937 rng(12345);
  auto check = [](float x) {
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(fs::bf16_to_float(fs::float_to_bf16(x)))) << std::hex << bits_of(x);
      return;
    }
    ASSERT_EQ(fs::float_to_bf16(x), bf16_round(x)) << x << " bits " << std::hex << bits_of(x);
  };
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const std::uint32_t b = h << 16;
    // The value, the midpoint to the next pattern and the floats beside it, a random float between.
    for (std::uint32_t low : {0x0000u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu, std::uint32_t(rng() & 0xffffu)})
      check(float_of(b | low));
  }
  EXPECT_EQ(fs::float_to_bf16(float_of(0x7f7f8000u)), 0x7f80) << "the midpoint above the largest bf16 is inf";
  EXPECT_EQ(fs::float_to_bf16(float_of(0x7f7f7fffu)), 0x7f7f);
}

#ifdef __FLT16_MANT_DIG__
std::uint16_t fp16_bits(_Float16 h) {
  std::uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

TEST(Numeric, Fp16DecodesEveryPattern) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    _Float16 x;
    const std::uint16_t hb = std::uint16_t(h);
    std::memcpy(&x, &hb, 2);
    const float want = float(x), got = fs::fp16_to_float(hb);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << h;
    } else {
      ASSERT_EQ(bits_of(got), bits_of(want)) << std::hex << h << ": " << got << " against " << want;
    }
  }
}

TEST(Numeric, Fp16RoundsToNearestEven) {
  auto check = [](float x) {
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(fs::fp16_to_float(fs::float_to_fp16(x)))) << std::hex << bits_of(x);
      return;
    }
    ASSERT_EQ(fs::float_to_fp16(x), fp16_bits(_Float16(x))) << x << " bits " << std::hex << bits_of(x);
  };
  // Every fp16 value, the midpoints to its neighbour and the floats beside
  // them (subnormals, the normal edge and overflow included).
  for (std::uint32_t h = 0; h < 0x7c00u; ++h) {
    const float a = fs::fp16_to_float(std::uint16_t(h));
    const float b = h + 1 < 0x7c00u ? fs::fp16_to_float(std::uint16_t(h + 1)) : 65536.0f;
    const float mid = a + (b - a) / 2;  // exact: fp16 neighbours are 2^-25 .. 2^5 apart
    for (float x : {a, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY), std::nextafter(a, INFINITY)}) {
      check(x);
      check(-x);
    }
  }
  // Random floats of every exponent, and the specials.
  std::mt19937 rng(6789);
  for (int i = 0; i < 1 << 20; ++i) check(float_of(rng()));
  for (float x : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 65519.99f, 65520.0f, 1e-8f, 2.9802322e-08f})
    check(x);
  EXPECT_EQ(fs::float_to_fp16(65520.0f), 0x7c00) << "the midpoint above 65504 is inf";
}
#else
TEST(Numeric, Fp16NeedsACompilerWithFloat16) {
  GTEST_SKIP() << "this compiler has no _Float16: the fp16 conversions are not checked here";
}
#endif

}  // namespace
