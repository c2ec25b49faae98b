// reference_sampler.cpp: the CPU reference. Logits in double from the same
// stored inputs, the GPU's noise bit for bit, ties to the lowest index.
#include "fusedsample/reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <thread>

#include "fusedsample/errors.hpp"
#include "fusedsample/numeric.hpp"
#include "fusedsample/sampler.hpp"
#include "templates/gumbel_race.cuh"
#include "templates/fs_params.cuh"

namespace fusedsample {
namespace {

// Element `first .. first+count` of `data` (stored as dtype) into `out`.
void to_double(const void* data, DType dtype, std::size_t first, std::size_t count, double* out) {
  if (dtype == DType::fp32) {
    const float* p = static_cast<const float*>(data) + first;
    for (std::size_t i = 0; i < count; ++i) out[i] = p[i];
  } else if (dtype == DType::bf16) {
    const std::uint16_t* p = static_cast<const std::uint16_t*>(data) + first;
    for (std::size_t i = 0; i < count; ++i) out[i] = bf16_to_float(p[i]);
  } else {
    const std::uint16_t* p = static_cast<const std::uint16_t*>(data) + first;
    for (std::size_t i = 0; i < count; ++i) out[i] = fp16_to_float(p[i]);
  }
}

// Bound on |fp32 GPU logit - exact logit| relative to sum_k |w_k h_k|.
// Tensor cores: d/16 sequential fp32 additions of k16 partial products (each
// exact or nearly), taken with a 2x margin; SIMT: d sequential fmaf.
double accumulation_gamma(DType dtype, std::int64_t d) {
  const double u = std::ldexp(1.0, -24);
  if (dtype == DType::fp32) return double(d) * u * 1.01;
  return (double(d) / 8.0 + 32.0) * u;
}

// What the kernels' fp32 holds of a value computed here in double: +-inf
// past the fp32 range (a magnitude that rounds to nearest above FLT_MAX,
// 2^128 - 2^103 and up), so that scores which overflow on the GPU tie there
// as infinities (docs/rng.md sections 5 and 6) and here alike.
double fp32_range(double x) {
  static const double overflow = std::ldexp(2.0 - std::ldexp(1.0, -24), 127);
  return std::fabs(x) >= overflow ? std::copysign(std::numeric_limits<double>::infinity(), x) : x;
}

}  // namespace

float reference_gumbel(std::uint64_t seed, std::uint64_t offset, std::uint64_t v, std::uint32_t sample) {
  return fs_gumbel_noise(seed, offset, v, sample);
}

std::vector<ReferenceResult> reference_sample(const void* weights, const void* hidden, DType dtype, std::int64_t V,
                                              std::int64_t d, std::int64_t N,
                                              const std::vector<ReferenceRowParams>& params, int S) {
  if (!weights || !hidden) throw InvalidArgument("reference_sample: null input");
  if (dtype != DType::bf16 && dtype != DType::fp16 && dtype != DType::fp32)
    throw Unsupported(fmt::format("reference_sample: unsupported dtype value {}", int(dtype)));
  if (V < 1 || d < 1 || N < 1 || S < 1)
    throw InvalidArgument(fmt::format("reference_sample: bad shape V={} d={} N={} S={}", V, d, N, S));
  // The Sampler's limits (sampler.hpp): the noise's counter layout holds for
  // these V only (docs/rng.md), and N x d, N x S, V, d are then sizes a
  // vector can be asked for without overflow.
  if (V > kMaxVocab)
    throw InvalidArgument(fmt::format("reference_sample: vocab (V) = {} exceeds the supported 2^31 - 1025", V));
  if (d > kMaxHidden) throw InvalidArgument(fmt::format("reference_sample: hidden (d) = {} is too large", d));
  if (N > kMaxRows || double(N) * double(S) > kMaxRowSamples)
    throw InvalidArgument(fmt::format("reference_sample: rows (N) = {} with {} samples each is too large", N, S));
  if (std::int64_t(params.size()) != N)
    throw InvalidArgument(fmt::format("reference_sample: {} row params for {} rows", params.size(), N));
  std::vector<double> H(static_cast<std::size_t>(N * d));
  to_double(hidden, dtype, 0, H.size(), H.data());
  const double gamma = accumulation_gamma(dtype, d);
  std::vector<ReferenceResult> out(std::size_t(N * S));

  auto do_row = [&](std::int64_t n) {
    const ReferenceRowParams& rp = params[std::size_t(n)];
    std::vector<double> logit(static_cast<std::size_t>(V));
    double max_abs_mass = 0;
    const double* h = &H[std::size_t(n * d)];
    std::vector<double> wrow(static_cast<std::size_t>(d));  // W rows converted one at a time
    const double* w = wrow.data();
    for (std::int64_t v = 0; v < V; ++v) {
      to_double(weights, dtype, std::size_t(v * d), std::size_t(d), wrow.data());
      double acc = 0, mass = 0;
      for (std::int64_t k = 0; k < d; ++k) {
        acc += w[k] * h[k];
        mass += std::fabs(w[k] * h[k]);
      }
      logit[std::size_t(v)] = fp32_range(acc);
      max_abs_mass = std::max(max_abs_mass, mass);
    }
    const float tau = rp.temperature;
    const bool valid = fs_temperature_valid(tau);
    const bool greedy = tau == 0.0f;
    const float inv_tau = (greedy || !valid) ? 1.0f : 1.0f / tau;
    for (int s = 0; s < S; ++s) {
      ReferenceResult& r = out[std::size_t(n * S + s)];
      if (!valid) continue;  // index -1
      double best = -std::numeric_limits<double>::infinity(), second = best, max_score = 0;
      std::int64_t bi = -1;
      for (std::int64_t v = 0; v < V; ++v) {
        double sc = logit[std::size_t(v)];
        if (!greedy)
          sc = fp32_range(sc * double(inv_tau) + double(reference_gumbel(rp.seed, rp.offset, std::uint64_t(v), std::uint32_t(s))));
        max_score = std::max(max_score, std::fabs(sc));
        // As the kernels: a NaN never wins, ties keep the lower index, and a
        // row of -inf scores picks its first index.
        if (std::isnan(sc)) continue;
        if (sc > best || bi < 0) {
          second = best;
          best = sc;
          bi = v;
        } else if (sc > second) {
          second = sc;
        }
      }
      r.index = bi;
      r.best = best;
      r.runner_up = second;
      // Two scores closer than this may legitimately swap order on the GPU.
      r.tolerance = 2.0 * (gamma * max_abs_mass * double(inv_tau) + std::ldexp(max_score, -23));
    }
  };

  // A worker's exception (e.g. std::bad_alloc for a V too large for this
  // host's memory) is carried to the caller: escaping a thread it would call
  // std::terminate (until session 40, the process aborted).
  const unsigned threads = std::max(1u, unsigned(std::min<std::int64_t>(std::thread::hardware_concurrency(), N)));
  std::vector<std::exception_ptr> errors(threads);
  std::vector<std::thread> pool;
  pool.reserve(threads);
  try {
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        try {
          for (std::int64_t n = t; n < N; n += threads) do_row(n);
        } catch (...) {
          errors[t] = std::current_exception();
        }
      });
  } catch (...) {  // a thread that could not start: join those that did, then report it
    for (auto& th : pool) th.join();
    throw;
  }
  for (auto& th : pool) th.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

}  // namespace fusedsample
