#include "tools/demo_data.hpp"

#include <algorithm>
#include <cstring>
#include <random>
#include <thread>

#include "fusedsample/numeric.hpp"

namespace fusedsample::cli {
namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<std::uint8_t> random_normal(DType dtype, std::size_t count, double stddev, std::uint64_t seed,
                                        std::uint64_t stream) {
  const std::size_t esize = dtype_size(dtype);
  std::uint64_t mix = seed ^ (0xD1B54A32D192ED03ull * (stream + 1));
  // The table: 65536 normal values already in storage format.
  std::mt19937_64 rng(splitmix64(mix));
  std::normal_distribution<double> normal(0.0, stddev);
  std::vector<std::uint8_t> table(65536 * esize);
  for (std::size_t i = 0; i < 65536; ++i) {
    const float f = float(normal(rng));
    if (dtype == DType::fp32) {
      std::memcpy(&table[i * 4], &f, 4);
    } else {
      const std::uint16_t h = dtype == DType::bf16 ? float_to_bf16(f) : float_to_fp16(f);
      std::memcpy(&table[i * 2], &h, 2);
    }
  }
  const std::uint64_t chunk_seed = splitmix64(mix);

  std::vector<std::uint8_t> out(count * esize);
  constexpr std::size_t kChunk = std::size_t(1) << 20;
  const std::size_t chunks = (count + kChunk - 1) / kChunk;
  auto fill_chunk = [&](std::size_t c) {
    std::uint64_t state = chunk_seed ^ (0x9E3779B97F4A7C15ull * (c + 1));
    const std::size_t begin = c * kChunk, end = std::min(count, begin + kChunk);
    std::uint64_t bits = 0;
    int left = 0;
    for (std::size_t i = begin; i < end; ++i) {
      if (left == 0) {
        bits = splitmix64(state);
        left = 4;
      }
      const std::size_t k = bits & 0xffff;
      bits >>= 16;
      --left;
      std::memcpy(&out[i * esize], &table[k * esize], esize);
    }
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), unsigned(std::min<std::size_t>(chunks, 64))));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t c = t; c < chunks; c += threads) fill_chunk(c);
    });
  for (auto& th : pool) th.join();
  return out;
}

}  // namespace fusedsample::cli
