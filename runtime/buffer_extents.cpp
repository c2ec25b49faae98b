#include "runtime/buffer_extents.hpp"

#include <fmt/format.h>

#include <limits>

#include "fusedsample/errors.hpp"
#include "fusedsample/kernel_spec.hpp"
#include "runtime/cuda_driver.hpp"

namespace fusedsample::runtime {
namespace {

// a * b * c, or SIZE_MAX when it does not fit (N x V x 4 of the logits can reach 2^64).
std::size_t saturated_product(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b * c;
  return p > std::numeric_limits<std::size_t>::max() ? std::numeric_limits<std::size_t>::max() : std::size_t(p);
}

}  // namespace

std::vector<BufferNeed> buffer_needs(const SamplerOptions& o, const SampleArgs& a, const float* logits) {
  const auto V = std::uint64_t(o.vocab), d = std::uint64_t(o.hidden), N = std::uint64_t(a.rows);
  const auto S = std::uint64_t(a.num_samples);
  const std::size_t elem = dtype_size(o.dtype);
  const std::string dt(to_string(o.dtype));
  std::vector<BufferNeed> needs;
  if (logits) {
    needs.push_back({logits, saturated_product(N, V, 4), "logits", fmt::format("[{}, {}] fp32", N, V)});
  } else {
    needs.push_back({a.weights, saturated_product(V, d, elem), "weights", fmt::format("[{}, {}] {}", V, d, dt)});
    needs.push_back({a.hidden_states, saturated_product(N, d, elem), "hidden_states", fmt::format("[{}, {}] {}", N, d, dt)});
  }
  const bool i64 = a.index_type == IndexType::int64;
  needs.push_back({a.out, saturated_product(N, S, i64 ? 8 : 4), "out", fmt::format("[{}, {}] {}", N, S, i64 ? "int64" : "int32")});
  if (a.temperatures) needs.push_back({a.temperatures, saturated_product(N, 1, 4), "temperatures", fmt::format("[{}] float", N)});
  if (a.seeds) needs.push_back({a.seeds, saturated_product(N, 1, 8), "seeds", fmt::format("[{}] uint64", N)});
  if (a.offsets) needs.push_back({a.offsets, saturated_product(N, 1, 8), "offsets", fmt::format("[{}] uint64", N)});
  return needs;
}

void check_extent(const BufferNeed& need, const PointerRange& range, bool pageable_ok) {
  const auto p = reinterpret_cast<std::uintptr_t>(need.ptr);
  if (!range.known) {
    if (pageable_ok) return;  // the GPU reads pageable host memory (HMM, ATS): nothing to check against
    throw InvalidArgument(fmt::format(
        "{} ({:#x}) is not memory the GPU can access: no CUDA allocation holds it (host memory needs "
        "cudaMallocHost or cudaHostRegister on this GPU)",
        need.name, p));
  }
  if (range.size == 0) return;
  const std::uintptr_t end = range.start + range.size;
  if (p < range.start || p > end || need.bytes > end - p)
    throw InvalidArgument(fmt::format(
        "{} ({:#x}): {} needs {} bytes, but its allocation ({:#x}, {} bytes) holds only {} from there; is "
        "the shape right?",
        need.name, p, need.shape, need.bytes, range.start, range.size, p < range.start || p > end ? 0 : end - p));
}

void check_buffer_extents(const std::vector<BufferNeed>& needs, bool pageable_ok) {
  for (const BufferNeed& need : needs) {
    CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                   CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    unsigned int type = 0;
    CUdeviceptr start = 0;
    std::size_t size = 0;
    void* data[] = {&type, &start, &size};
    // Unlike cuPointerGetAttribute, an unknown pointer is not an error here:
    // its attributes come back zero (CUDA driver API reference).
    FS_CU(cuPointerGetAttributes(3, attrs, data, reinterpret_cast<CUdeviceptr>(need.ptr)));
    check_extent(need, PointerRange{type != 0, std::uintptr_t(start), size}, pageable_ok);
  }
}

}  // namespace fusedsample::runtime
