#include "runtime/buffer_extents.hpp"

#include <fmt/format.h>

#include <limits>

#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "runtime/cuda_driver.hpp"

namespace fusedsample::runtime {
namespace {

// a * b * c, or SIZE_MAX when it does not fit.
std::size_t saturated_product(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b * c;
  return p > std::numeric_limits<std::size_t>::max() ? std::numeric_limits<std::size_t>::max() : std::size_t(p);
}

void add(BufferNeeds& needs, const void* p, const char* name, std::uint64_t rows, std::uint64_t cols, std::size_t elem,
         const char* type) {
  needs.items[std::size_t(needs.count++)] = {p, saturated_product(rows, cols ? cols : 1, elem), name, rows, cols, type};
}

PointerRange query(std::uintptr_t p) {
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                 CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  unsigned int type = 0;
  CUdeviceptr start = 0;
  std::size_t size = 0;
  void* data[] = {&type, &start, &size};
  // Unlike cuPointerGetAttribute, an unknown pointer is not an error here:
  // its attributes come back zero (CUDA driver API reference).
  FS_CU(cuPointerGetAttributes(3, attrs, data, CUdeviceptr(p)));
  return PointerRange{type != 0, std::uintptr_t(start), size};
}

// Whether p lies in cuMemAlloc (cudaMalloc) memory: the allocations legacy
// CUDA IPC can export. Those are separate allocations even where their
// addresses happen to follow each other, so they are never joined.
bool legacy_allocation(std::uintptr_t p) {
  CUpointer_attribute attr = CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE;
  int legacy = 0;
  void* data[] = {&legacy};
  FS_CU(cuPointerGetAttributes(1, &attr, data, CUdeviceptr(p)));
  return legacy != 0;
}

}  // namespace

std::string BufferNeed::shape() const {
  return cols ? fmt::format("[{}, {}] {}", rows, cols, type) : fmt::format("[{}] {}", rows, type);
}

BufferNeeds buffer_needs(const SamplerOptions& o, const SampleArgs& a, const float* logits) {
  const auto V = std::uint64_t(o.vocab), d = std::uint64_t(o.hidden), N = std::uint64_t(a.rows);
  const auto S = std::uint64_t(a.num_samples);
  const std::size_t elem = dtype_size(o.dtype);
  const char* dt = o.dtype == DType::bf16 ? "bf16" : o.dtype == DType::fp16 ? "fp16" : "fp32";
  BufferNeeds needs;
  if (logits) {
    add(needs, logits, "logits", N, V, 4, "fp32");
  } else {
    add(needs, a.weights, "weights", V, d, elem, dt);
    add(needs, a.hidden_states, "hidden_states", N, d, elem, dt);
  }
  const bool i64 = a.index_type == IndexType::int64;
  add(needs, a.out, "out", N, S, i64 ? 8 : 4, i64 ? "int64" : "int32");
  if (a.temperatures) add(needs, a.temperatures, "temperatures", N, 0, 4, "float");
  if (a.seeds) add(needs, a.seeds, "seeds", N, 0, 8, "uint64");
  if (a.offsets) add(needs, a.offsets, "offsets", N, 0, 8, "uint64");
  return needs;
}

bool fits(const BufferNeed& need, const PointerRange& range) {
  const auto p = reinterpret_cast<std::uintptr_t>(need.ptr);
  const std::uintptr_t end = range.start + range.size;
  return p >= range.start && p <= end && need.bytes <= end - p;
}

void check_extent(const BufferNeed& need, const PointerRange& range, bool unknown_ok) {
  const auto p = reinterpret_cast<std::uintptr_t>(need.ptr);
  if (!range.known) {
    if (unknown_ok) return;  // pageable memory the GPU reads, or memory allocated in a capture
    throw InvalidArgument(fmt::format(
        "{} ({:#x}) is not memory the GPU can access: no CUDA allocation holds it (host memory needs "
        "cudaMallocHost or cudaHostRegister on this GPU)",
        need.name, p));
  }
  if (range.size == 0 || fits(need, range)) return;
  const std::uintptr_t end = range.start + range.size;
  throw InvalidArgument(fmt::format(
      "{} ({:#x}): {} needs {} bytes, but its allocation ({:#x}, {} bytes) holds only {} from there; is the "
      "shape right?",
      need.name, p, need.shape(), need.bytes, range.start, range.size, p < range.start || p > end ? 0 : end - p));
}

void check_buffer_extents(const BufferNeeds& needs, bool pageable_ok, CUstream_st* stream) {
  for (const BufferNeed& need : needs) {
    PointerRange r = query(reinterpret_cast<std::uintptr_t>(need.ptr));
    // Only on the way to a refusal: join the virtual-memory reservations (or
    // registered host ranges) that follow directly; never cudaMalloc memory,
    // whose allocations often sit back to back (a W one row short would run
    // into the next one).
    if (r.known && r.size != 0 && !fits(need, r) && !legacy_allocation(r.start))
      for (int i = 0; i < 16 && !fits(need, r); ++i) {
        const std::uintptr_t end = r.start + r.size;
        const PointerRange next = query(end);
        if (!next.known || next.start != end || next.size == 0 || legacy_allocation(end)) break;
        r.size += next.size;
      }
    // Unknown memory passes while the call's own stream is captured (a stream-ordered allocation made in the
    // capture). Asked as the Sampler asks: until session 61 a query of the legacy stream while a blocking stream
    // was captured threw a CudaError (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) here, not this refusal.
    check_extent(need, r,
                 pageable_ok || (!r.known && driver::capture_in_progress(stream) ==
                                                  driver::CaptureInProgress::on_this_stream));
  }
}

}  // namespace fusedsample::runtime
