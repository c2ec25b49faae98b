// tuner_inputs.cpp: see tuner_inputs.hpp.
#include "autotune/tuner_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "fusedsample/numeric.hpp"

namespace fusedsample::autotune {
namespace {

std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void store(std::vector<std::uint8_t>& out, DType dtype, std::size_t i, float f) {
  if (dtype == DType::fp32) {
    std::memcpy(&out[i * 4], &f, 4);
    return;
  }
  const std::uint16_t h = dtype == DType::bf16 ? float_to_bf16(f) : float_to_fp16(f);
  std::memcpy(&out[i * 2], &h, 2);
}

// out[i] = value(i) for i < n, in parallel; value must be a pure function.
template <typename F>
std::vector<std::uint8_t> fill(DType dtype, std::size_t n, F value) {
  std::vector<std::uint8_t> out(n * dtype_size(dtype));
  constexpr std::size_t kChunk = std::size_t(1) << 20;
  const std::size_t chunks = (n + kChunk - 1) / kChunk;
  const unsigned threads =
      unsigned(std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, std::max<std::size_t>(chunks, 1)));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t c = t; c < chunks; c += threads)
        for (std::size_t i = c * kChunk, end = std::min(n, (c + 1) * kChunk); i < end; ++i)
          store(out, dtype, i, value(i));
    });
  for (auto& th : pool) th.join();
  return out;
}

}  // namespace

std::vector<std::uint8_t> exact_integers(DType dtype, std::size_t n, int magnitude, std::uint64_t salt) {
  const std::uint64_t span = std::uint64_t(2 * magnitude + 1);
  return fill(dtype, n, [=](std::size_t i) {
    return float(std::int64_t(mix64(i ^ (salt * 0xD1B54A32D192ED03ull)) % span) - magnitude);
  });
}

std::vector<std::uint8_t> random_values(DType dtype, std::size_t n, float scale, std::uint64_t salt) {
  return fill(dtype, n, [=](std::size_t i) {
    // Irwin-Hall: the sum of four 16-bit uniforms, centred and scaled to variance 1.
    const std::uint64_t r = mix64(i * 0x100000001B3ull + salt);
    float s = 0;
    for (int k = 0; k < 4; ++k) s += float((r >> (16 * k)) & 0xffff) / 65536.0f;
    return (s - 2.0f) * std::sqrt(3.0f) * scale;
  });
}

ExactRanges exact_ranges(std::int64_t hidden) {
  ExactRanges r;
  if (2 * hidden > (std::int64_t(1) << 24)) r.weights = 1;
  return r;
}

float exact_check_temperature(std::int64_t hidden) {
  return std::max(8.0f, float(std::sqrt(double(std::max<std::int64_t>(hidden, 1)))));
}

}  // namespace fusedsample::autotune
