#include "autotune/tune_buffers.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "autotune/tuner_inputs.hpp"
#include "runtime/cuda_driver.hpp"

namespace fusedsample::autotune {
namespace {

constexpr std::uint64_t kCheckSeed = 0xC0FFEE, kTimingSeed = 0x5EED;

runtime::DeviceMemory upload(const std::vector<std::uint8_t>& host) {
  runtime::DeviceMemory m(host.size());
  m.upload(host.data(), host.size());
  return m;
}

}  // namespace

TuneBuffers::TuneBuffers(DType dtype, std::int64_t vocab, std::int64_t hidden, std::int64_t max_rows, int samples)
    : hidden_(hidden) {
  const std::size_t wn = std::size_t(vocab * hidden), hn = std::size_t(max_rows * hidden);
  const ExactRanges ranges = exact_ranges(hidden);
  w_exact_ = upload(exact_integers(dtype, wn, ranges.weights, 1));
  h_exact_ = upload(exact_integers(dtype, hn, ranges.hidden, 2));
  w_random_ = upload(random_values(dtype, wn, 1.0f, 3));
  h_random_ = upload(random_values(dtype, hn, float(1.0 / std::sqrt(double(hidden))), 4));
  out_ = runtime::DeviceMemory(std::size_t(max_rows) * std::size_t(std::max(samples, kCheckSamples)) *
                               sizeof(std::int64_t));
  std::vector<std::uint64_t> seeds(static_cast<std::size_t>(max_rows));
  for (std::size_t i = 0; i < seeds.size(); ++i) seeds[i] = kTimingSeed + 0x9e3779b97f4a7c15ull * (i + 1);
  seeds_ = runtime::DeviceMemory(seeds.size() * sizeof(std::uint64_t));
  seeds_.upload(seeds.data(), seeds.size() * sizeof(std::uint64_t));
}

std::vector<std::int64_t> TuneBuffers::check(Sampler& sampler, std::int64_t rows, CUstream stream) const {
  FS_CU(cuMemsetD8Async(out_.get(), 0xAB, out_.size(), stream));  // stale results cannot match
  SampleArgs a;
  a.weights = w_exact_.as<void>();
  a.hidden_states = h_exact_.as<void>();
  a.rows = rows;
  a.temperature = exact_check_temperature(hidden_);
  a.seed = kCheckSeed;
  a.offset = 11;
  a.num_samples = kCheckSamples;
  a.out = out_.as<void>();
  sampler.sample(a, reinterpret_cast<Stream>(stream));
  FS_CU(cuStreamSynchronize(stream));
  std::vector<std::int64_t> got(std::size_t(rows) * kCheckSamples);
  out_.download(got.data(), got.size() * sizeof(std::int64_t));
  return got;
}

SampleArgs TuneBuffers::timing_args(std::int64_t rows, int samples) const {
  SampleArgs a;
  a.weights = w_random_.as<void>();
  a.hidden_states = h_random_.as<void>();
  a.rows = rows;
  a.temperature = 1.0f;
  a.seeds = seeds_.as<std::uint64_t>();
  a.offset = 7;
  a.num_samples = samples;
  a.out = out_.as<void>();
  return a;
}

}  // namespace fusedsample::autotune
