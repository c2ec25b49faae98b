// buffer_extents.hpp: what each device buffer of a call must hold, and the
// check of one against the allocation the driver knows it to lie in. A wrong
// shape (W of fewer rows than V, H of fewer than N, an output too short for
// N x S) would otherwise read or write past its allocation: wrong samples, or
// a fault that leaves the process's CUDA context unusable.
//
// The needs and the range test are pure host code (CPU tests); the driver
// query (cuPointerGetAttributes: one call per buffer, no synchronisation,
// allowed during graph capture) is in check_buffer_extents.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fusedsample/sampler.hpp"

namespace fusedsample::runtime {

struct BufferNeed {
  const void* ptr;
  std::size_t bytes;  // in 128 bits, saturated at SIZE_MAX (then no allocation holds it)
  const char* name;   // the SampleArgs field (or "logits")
  std::string shape;  // e.g. "[151936, 4096] bf16"
};

// The buffers a call reads or writes and their extents: weights and
// hidden_states (sample) or logits (sample_logits: logits != nullptr), out,
// and the per-row arrays given.
std::vector<BufferNeed> buffer_needs(const SamplerOptions& options, const SampleArgs& args,
                                     const float* logits = nullptr);

// What the driver says about a pointer: whether it lies in an allocation it
// knows (CUDA device, pinned or managed memory), and that allocation's range.
struct PointerRange {
  bool known = false;
  std::uintptr_t start = 0;
  std::size_t size = 0;
};

// Throws InvalidArgument naming the buffer when `need` does not fit in
// `range` from its pointer on, or when the driver does not know the pointer
// and the GPU cannot read pageable host memory (pageable_ok: the device's
// CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, e.g. HMM). A known pointer
// whose range the driver does not report (size 0) passes.
void check_extent(const BufferNeed& need, const PointerRange& range, bool pageable_ok);

// The driver's ranges for every need of the call, each checked; the
// context must be current.
void check_buffer_extents(const std::vector<BufferNeed>& needs, bool pageable_ok);

}  // namespace fusedsample::runtime
