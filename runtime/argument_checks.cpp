#include "runtime/argument_checks.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "fusedsample/errors.hpp"
#include "templates/fs_params.cuh"

namespace fusedsample::runtime {
namespace {

void check_pointer(const void* p, std::size_t alignment, const char* name) {
  if (!p) throw InvalidArgument(fmt::format("{} is a null pointer", name));
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  if (addr % alignment != 0)
    throw InvalidArgument(fmt::format("{} ({:#x}) is not {}-byte aligned", name, addr, alignment));
}

void check_optional_pointer(const void* p, std::size_t alignment, const char* name) {
  if (p) check_pointer(p, alignment, name);
}

static_assert(FS_MIN_TEMPERATURE == kMinTemperature, "the kernels' and the API's smallest temperature differ");

// The batch limits of a launch, shared by sample() and reserve().
void check_batch(std::int64_t rows, int num_samples) {
  if (rows < 1) throw InvalidArgument(fmt::format("rows (N) must be >= 1, got {}", rows));
  if (rows > kMaxRows) throw InvalidArgument(fmt::format("rows (N) = {} exceeds 2^31 - 1", rows));
  if (num_samples < 1) throw InvalidArgument(fmt::format("num_samples must be >= 1, got {}", num_samples));
  const double total = double(rows) * double(num_samples);
  if (total > kMaxRowSamples) throw InvalidArgument(fmt::format("rows * num_samples = {} is too large", total));
}

void check_row_params(const SampleArgs& a) {
  check_batch(a.rows, a.num_samples);
  if (!a.temperatures) {
    if (std::isnan(a.temperature)) throw InvalidArgument("temperature is NaN");
    if (std::isinf(a.temperature)) throw InvalidArgument("temperature is infinite");
    if (a.temperature < 0) throw InvalidArgument(fmt::format("temperature must be >= 0 (0 = greedy), got {}", a.temperature));
    if (!fs_temperature_valid(a.temperature))  // positive below 2^-64: l / tau would overflow fp32
      throw InvalidArgument(fmt::format("temperature {} is below the smallest supported, 2^-64 = {} (0 = greedy)",
                                        a.temperature, FS_MIN_TEMPERATURE));
  }
  check_optional_pointer(a.temperatures, alignof(float), "temperatures");
  check_optional_pointer(a.seeds, alignof(std::uint64_t), "seeds");
  check_optional_pointer(a.offsets, alignof(std::uint64_t), "offsets");
  if (a.index_type != IndexType::int64 && a.index_type != IndexType::int32)
    throw InvalidArgument("index_type must be int64 or int32");
  check_pointer(a.out, a.index_type == IndexType::int64 ? 8 : 4, "out");
}

}  // namespace

void check_options(const SamplerOptions& o) {
  if (o.device < -1)
    throw InvalidArgument(fmt::format("device must be a CUDA ordinal >= 0, or -1 for the current context's, got {}",
                                      o.device));
  if (o.vocab < 1) throw InvalidArgument(fmt::format("vocab (V) must be >= 1, got {}", o.vocab));
  if (o.vocab > kMaxVocab)
    throw InvalidArgument(fmt::format("vocab (V) = {} exceeds the supported 2^31 - 1025", o.vocab));
  if (o.hidden < 8 || o.hidden % 8 != 0)
    throw InvalidArgument(fmt::format("hidden (d) must be a positive multiple of 8 elements, got {}", o.hidden));
  if (o.hidden > kMaxHidden) throw InvalidArgument(fmt::format("hidden (d) = {} is too large", o.hidden));
  if (o.dtype != DType::bf16 && o.dtype != DType::fp16 && o.dtype != DType::fp32)
    throw Unsupported(fmt::format("unsupported dtype value {}", int(o.dtype)));
  if (o.spec) {
    if (o.spec->dtype != o.dtype)
      throw InvalidArgument(fmt::format("forced spec [{}] has dtype {} but the sampler's dtype is {}", o.spec->to_string(),
                                        to_string(o.spec->dtype), to_string(o.dtype)));
    if (o.spec->variant == Variant::logits)
      throw InvalidArgument("the forced spec's variant must compute the matmul (not 'logits')");
    KernelSpec s = *o.spec;  // the sampler compiles wgmma for sm_90a on an sm_90 device
    s.arch = target_arch(s.variant, s.arch);
    s.validate();
  }
  if (o.logits_spec) {
    if (o.logits_spec->variant != Variant::logits)
      throw InvalidArgument(fmt::format("the forced logits spec [{}] must have variant 'logits', not '{}'",
                                        o.logits_spec->to_string(), to_string(o.logits_spec->variant)));
    o.logits_spec->validate();
  }
}

void check_args(const SamplerOptions& o, const SampleArgs& a) {
  check_pointer(a.weights, 16, "weights");
  check_pointer(a.hidden_states, 16, "hidden_states");
  check_row_params(a);
  (void)o;
}

void check_reserve(std::int64_t rows, int num_samples) {
  try {
    check_batch(rows, num_samples);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(fmt::format("reserve({}, {}): {}", rows, num_samples, e.what()));
  }
}

void check_logits_args(const SamplerOptions& o, const float* logits, const SampleArgs& a) {
  check_pointer(logits, 4, "logits");
  check_row_params(a);
  (void)o;
}

}  // namespace fusedsample::runtime
