// host_logits.hpp: the values of stored (bf16, fp16, fp32) inputs on the
// host, and the exact (double) logits of stored W and H that the Sampler
// GPU tests compare the kernels' samples with.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "fusedsample/kernel_spec.hpp"
#include "fusedsample/numeric.hpp"

namespace fusedsample::testing {

// The storage of a random [rows, d] matrix is a prefix of a larger one's.
inline const void* storage_rows(const std::vector<std::uint8_t>& s, DType dtype, std::int64_t first_row, std::int64_t d) {
  return s.data() + std::size_t(first_row * d) * dtype_size(dtype);
}

inline double storage_value(const std::vector<std::uint8_t>& s, DType dtype, std::size_t i) {
  if (dtype == DType::fp32) {
    float f;
    std::memcpy(&f, &s[i * 4], 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, &s[i * 2], 2);
  return dtype == DType::bf16 ? bf16_to_float(h) : fp16_to_float(h);
}

// Exact (double) logits [N, V] of stored W [V, d] and H [N, d].
inline std::vector<double> host_logits(const std::vector<std::uint8_t>& w, const std::vector<std::uint8_t>& h,
                                       DType dtype, std::int64_t V, std::int64_t d, std::int64_t N) {
  std::vector<double> Wd(std::size_t(V * d)), Hd(std::size_t(N * d)), out(std::size_t(N * V));
  for (std::size_t i = 0; i < Wd.size(); ++i) Wd[i] = storage_value(w, dtype, i);
  for (std::size_t i = 0; i < Hd.size(); ++i) Hd[i] = storage_value(h, dtype, i);
  const unsigned threads = std::max(1u, std::min(std::thread::hardware_concurrency(), 32u));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::int64_t v = t; v < V; v += threads)
        for (std::int64_t n = 0; n < N; ++n) {
          double acc = 0;
          for (std::int64_t k = 0; k < d; ++k) acc += Wd[std::size_t(v * d + k)] * Hd[std::size_t(n * d + k)];
          out[std::size_t(n * V + v)] = acc;
        }
    });
  for (auto& th : pool) th.join();
  return out;
}

}  // namespace fusedsample::testing
