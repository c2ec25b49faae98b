#include "fusedsample/numeric.hpp"

#include <cmath>

namespace fusedsample {

float fp16_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const int exp = (h >> 10) & 0x1f;
  const std::uint32_t mant = h & 0x3ffu;
  float mag;
  if (exp == 0) mag = std::ldexp(float(mant), -24);  // subnormal or zero
  else if (exp == 31) mag = mant ? NAN : INFINITY;
  else mag = std::ldexp(float(mant | 0x400u), exp - 25);
  std::uint32_t b;
  std::memcpy(&b, &mag, 4);
  b |= sign;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

std::uint16_t float_to_fp16(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  const std::uint16_t sign = std::uint16_t((b >> 16) & 0x8000u);
  const float a = std::fabs(f);
  if (std::isnan(f)) return sign | 0x7e00u;
  if (a >= 65520.0f) return sign | 0x7c00u;  // rounds to inf
  if (a < 6.103515625e-05f) {                // subnormal range: multiples of 2^-24
    const float q = std::nearbyint(a * 16777216.0f);  // round-to-nearest-even (default mode)
    return sign | std::uint16_t(q);
  }
  int e;
  const float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  float q = std::nearbyint(m * 2048.0f);  // 11 significant bits
  if (q == 2048.0f) { q = 1024.0f; ++e; }
  const int exp = e - 1 + 15;
  if (exp >= 31) return sign | 0x7c00u;
  return sign | std::uint16_t((exp << 10) | (std::uint32_t(q) & 0x3ffu));
}

}  // namespace fusedsample
