// buffer_extents.hpp: what each device buffer of a call must hold, and the
// check of one against the allocation the driver knows it to lie in. A wrong
// shape (W of fewer rows than V, H of fewer than N, an output too short for
// N x S) would otherwise read or write past its allocation: wrong samples, or
// a fault that leaves the process's CUDA context unusable.
//
// The needs and the range test are pure host code (CPU tests); the driver
// query (cuPointerGetAttributes: one call per buffer, no synchronisation,
// allowed during graph capture) is in check_buffer_extents. Nothing is
// formatted unless a buffer is refused.
//
// Not caught: a buffer that fits its allocation but runs into another tensor
// of the same block (a caching allocator's), or into an unmapped part of a
// virtual reservation (the range the driver reports is the whole
// reservation), and device memory of another GPU without peer access.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fusedsample/sampler.hpp"

struct CUstream_st;  // CUstream (cuda.h)

namespace fusedsample::runtime {

struct BufferNeed {
  const void* ptr = nullptr;
  std::size_t bytes = 0;       // in 128 bits, saturated at SIZE_MAX (then no allocation holds it)
  const char* name = "";       // the SampleArgs field (or "logits")
  std::uint64_t rows = 0, cols = 0;  // the shape: [rows] when cols is 0, else [rows, cols]
  const char* type = "";       // element type, e.g. "bf16"
  std::string shape() const;   // e.g. "[151936, 4096] bf16"
};

// The buffers a call reads or writes and their extents: weights and
// hidden_states (sample) or logits (sample_logits: logits != nullptr), out,
// and the per-row arrays given. At most six; no allocation.
struct BufferNeeds {
  std::array<BufferNeed, 6> items{};
  int count = 0;
  const BufferNeed* begin() const { return items.data(); }
  const BufferNeed* end() const { return items.data() + count; }
};
BufferNeeds buffer_needs(const SamplerOptions& options, const SampleArgs& args, const float* logits = nullptr);

// What the driver says about a pointer: whether it lies in an allocation it
// knows (CUDA device, pinned or managed memory), and that allocation's range
// (for virtual memory the reservation's; adjacent known ranges may be joined).
struct PointerRange {
  bool known = false;
  std::uintptr_t start = 0;
  std::size_t size = 0;
};

// Whether `need` fits in `range` from its pointer on.
bool fits(const BufferNeed& need, const PointerRange& range);

// Throws InvalidArgument naming the buffer when `need` does not fit in
// `range`, or when the driver does not know the pointer and unknown_ok is
// false. unknown_ok: the GPU reads pageable host memory (HMM, ATS), or the
// call's stream is being captured, where memory allocated in the capture
// (cuMemAllocAsync) is unknown to the driver until the graph first runs. A
// known pointer whose range the driver does not report (size 0) passes.
void check_extent(const BufferNeed& need, const PointerRange& range, bool unknown_ok);

// The driver's ranges for every need of the call, each checked; a need that
// overruns a virtual-memory reservation or registered host range is tried
// against the ones that follow it directly (a buffer across adjacent
// reservations is valid; cudaMalloc allocations are never joined). The context
// must be current; `stream` is only asked whether it is being captured, and
// only for a pointer the driver does not know.
void check_buffer_extents(const BufferNeeds& needs, bool pageable_ok, CUstream_st* stream);

}  // namespace fusedsample::runtime
