// tune_buffers.hpp: what the tuner's candidates run on, on the GPU. The
// exactness check's inputs (tuner_inputs.hpp: small integers, so every
// correct config gives bit-identical samples) and the timing inputs (random
// W and H, temperature 1, a seed per row, as a server's batch of independent
// requests has), uploaded once per tune for the largest bucket's rows, and
// the output buffer both write.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <vector>

#include "fusedsample/kernel_spec.hpp"
#include "fusedsample/sampler.hpp"
#include "runtime/device_memory.hpp"

namespace fusedsample::autotune {

class TuneBuffers {
 public:
  // Samples per row of the exactness check.
  static constexpr int kCheckSamples = 2;

  TuneBuffers() = default;
  // Timed calls draw `samples` per row (>= 1).
  TuneBuffers(DType dtype, std::int64_t vocab, std::int64_t hidden, std::int64_t max_rows, int samples = 1);

  // Runs `sampler` on the exact inputs (rows <= max_rows, kCheckSamples per
  // row) on `stream` and returns the samples; the output is poisoned first,
  // so stale results cannot match.
  std::vector<std::int64_t> check(Sampler& sampler, std::int64_t rows, CUstream stream) const;
  // The arguments of a timed call: random inputs, rows <= max_rows,
  // `samples` <= the constructor's per row.
  SampleArgs timing_args(std::int64_t rows, int samples = 1) const;
  // W's random copy: the floor streams it.
  const runtime::DeviceMemory& random_weights() const { return w_random_; }

 private:
  std::int64_t hidden_ = 0;
  runtime::DeviceMemory w_exact_, h_exact_, w_random_, h_random_, out_, seeds_;
};

}  // namespace fusedsample::autotune
