// numeric.hpp: host conversions for the 16-bit storage types.
#pragma once
#include <cstdint>
#include <cstring>

namespace fusedsample {

inline float bf16_to_float(std::uint16_t h) {
  const std::uint32_t b = std::uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Round to nearest even; NaN stays NaN.
inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  if ((b & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((b >> 16) | 0x40);
  b += 0x7fffu + ((b >> 16) & 1u);
  return std::uint16_t(b >> 16);
}

float fp16_to_float(std::uint16_t h);
std::uint16_t float_to_fp16(float f);  // round to nearest even

}  // namespace fusedsample
