#include "bench/bench_data.hpp"

#include <cmath>
#include <thread>
#include <vector>

#include "fusedsample/numeric.hpp"

namespace fusedsample::bench {
namespace {

// splitmix64 -> approximately normal via the sum of 4 uniforms (Irwin-Hall).
float approx_normal(std::uint64_t i, std::uint64_t salt) {
  auto mix = [](std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  const std::uint64_t r = mix(i * 0x100000001b3ull + salt);
  float s = 0;
  for (int k = 0; k < 4; ++k) s += float((r >> (16 * k)) & 0xffff) / 65536.0f;
  return (s - 2.0f) * std::sqrt(3.0f);  // mean 0, variance 1
}

std::vector<std::uint8_t> fill(std::size_t n, DType dtype, float scale, std::uint64_t salt) {
  std::vector<std::uint8_t> out(n * dtype_size(dtype));
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t i = t; i < n; i += threads) {
        const float f = approx_normal(i, salt) * scale;
        if (dtype == DType::fp32) {
          std::memcpy(&out[i * 4], &f, 4);
        } else {
          const std::uint16_t h = dtype == DType::bf16 ? float_to_bf16(f) : float_to_fp16(f);
          std::memcpy(&out[i * 2], &h, 2);
        }
      }
    });
  for (auto& th : pool) th.join();
  return out;
}

}  // namespace

std::unique_ptr<ShapeData> make_shape_data(Shape shape, DType dtype, std::int64_t max_rows, float logit_std,
                                           int max_samples) {
  auto d = std::make_unique<ShapeData>();
  d->shape = shape;
  d->dtype = dtype;
  d->max_rows = max_rows;
  const auto w = fill(std::size_t(shape.vocab * shape.hidden), dtype, 1.0f, 1);
  const auto h = fill(std::size_t(max_rows * shape.hidden), dtype, logit_std / std::sqrt(float(shape.hidden)), 2);
  d->weights = runtime::DeviceMemory(w.size());
  d->weights.upload(w.data(), w.size());
  d->hidden = runtime::DeviceMemory(h.size());
  d->hidden.upload(h.data(), h.size());
  d->logits = runtime::DeviceMemory(std::size_t(max_rows * shape.vocab) * sizeof(float));
  d->out = runtime::DeviceMemory(std::size_t(max_rows) * std::size_t(max_samples) * 8);
  std::vector<std::uint64_t> seeds(static_cast<std::size_t>(max_rows));
  for (std::size_t i = 0; i < seeds.size(); ++i) seeds[i] = 0x5eed + 0x9e3779b97f4a7c15ull * (i + 1);
  d->seeds = runtime::DeviceMemory(seeds.size() * 8);
  d->seeds.upload(seeds.data(), seeds.size() * 8);
  return d;
}

}  // namespace fusedsample::bench
