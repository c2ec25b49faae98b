// argument_checks.hpp: validation of the sampler's inputs. Pure host code (no
// driver calls), so every bad input is tested on machines without a GPU.
#pragma once
#include "fusedsample/sampler.hpp"

namespace fusedsample::runtime {

// Throws InvalidArgument / Unsupported naming the bad field.
void check_options(const SamplerOptions& options);
void check_args(const SamplerOptions& options, const SampleArgs& args);
// Sampler::reserve's rows and samples: the limits of a launch (rows in
// [1, 2^31 - 1], num_samples >= 1, their product at most 1e12).
void check_reserve(std::int64_t rows, int num_samples);
// The logits variant reads fp32 [N, V]; weights/hidden are unused.
void check_logits_args(const SamplerOptions& options, const float* logits, const SampleArgs& args);

}  // namespace fusedsample::runtime
