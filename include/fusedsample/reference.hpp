// reference.hpp: the CPU reference sampler. Logits in double precision from
// the same bf16/fp16/fp32 inputs; the same Philox/Gumbel noise as the GPU,
// bit for bit (templates/gumbel.cuh compiled for the host).
#pragma once
#include <cstdint>
#include <vector>

#include "fusedsample/kernel_spec.hpp"

namespace fusedsample {

struct ReferenceRowParams {
  float temperature = 1.0f;
  std::uint64_t seed = 0;
  std::uint64_t offset = 0;
};

struct ReferenceResult {
  std::int64_t index = -1;  // the winner; -1 for an invalid temperature
  double best = 0;          // its perturbed score
  double runner_up = 0;     // the second-best perturbed score
  double tolerance = 0;     // bound on |GPU score - reference score| for this row
};

// Host copies of W [V, d] and H [N, d] in `dtype` storage (2 or 4 bytes each).
// Returns [N][S] results, row-major.
std::vector<ReferenceResult> reference_sample(const void* weights, const void* hidden, DType dtype,
                                              std::int64_t vocab, std::int64_t hidden_dim, std::int64_t rows,
                                              const std::vector<ReferenceRowParams>& params, int num_samples);

// The noise the kernels add to vocabulary index v of (seed, offset, sample).
float reference_gumbel(std::uint64_t seed, std::uint64_t offset, std::uint64_t vocab_index, std::uint32_t sample);

}  // namespace fusedsample
