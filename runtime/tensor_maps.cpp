#include "runtime/tensor_maps.hpp"

#include <fmt/format.h>

#include "fusedsample/errors.hpp"
#include "runtime/cuda_driver.hpp"

namespace fusedsample::runtime {

CUtensorMap operand_tensor_map(const void* base, DType dtype, std::int64_t rows, std::int64_t hidden, int box_rows,
                               int box_cols, const char* name) {
  if (dtype != DType::bf16 && dtype != DType::fp16)
    throw Unsupported(fmt::format("tensor map for {}: dtype {} (the copy engine path is bf16/fp16)", name, to_string(dtype)));
  // Limits of cuTensorMapEncodeTiled: dims < 2^32, strides a multiple of 16
  // bytes below 2^40, box dims <= 256, a 16-byte aligned base.
  if (rows < 1 || rows > 0xffffffffll || hidden < 8 || hidden % 8 != 0 || hidden > 0xffffffffll)
    throw InvalidArgument(fmt::format("tensor map for {}: shape [{}, {}] cannot be addressed by the copy engine", name,
                                      rows, hidden));
  if (box_rows < 1 || box_rows > 256)
    throw InvalidArgument(fmt::format("tensor map for {}: box of {} rows (1..256)", name, box_rows));
  if (box_cols != 64 && box_cols != 32)
    throw InvalidArgument(fmt::format("tensor map for {}: box of {} columns (64 or 32: 128- or 64-byte swizzled rows)",
                                      name, box_cols));
  if (reinterpret_cast<std::uintptr_t>(base) % 16 != 0)
    throw InvalidArgument(fmt::format("tensor map for {}: base address {} is not 16-byte aligned", name, base));
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cuuint64_t(hidden), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(hidden) * 2};  // bytes between rows
  const cuuint32_t box[2] = {cuuint32_t(box_cols), cuuint32_t(box_rows)};  // 2 * box_cols bytes per row
  const cuuint32_t unit[2] = {1, 1};
  const CUresult r = driver::api().cuTensorMapEncodeTiled(
      &map, dtype == DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
      const_cast<void*>(base), dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
      box_cols == 64 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    driver::check(r, fmt::format("cuTensorMapEncodeTiled({}: [{}, {}] {}, box {} x {})", name, rows, hidden,
                                 to_string(dtype), box_cols, box_rows)
                         .c_str());
  return map;
}

const CUtensorMap& OperandMapCache::get(const void* base, DType dtype, std::int64_t rows, std::int64_t hidden,
                                        int box_rows, int box_cols, const char* name) {
  if (base_ != base || dtype_ != dtype || rows_ != rows || hidden_ != hidden || box_rows_ != box_rows ||
      box_cols_ != box_cols) {
    map_ = operand_tensor_map(base, dtype, rows, hidden, box_rows, box_cols, name);  // the key changes only once it encoded
    base_ = base;
    dtype_ = dtype;
    rows_ = rows;
    hidden_ = hidden;
    box_rows_ = box_rows;
    box_cols_ = box_cols;
  }
  return map_;
}

}  // namespace fusedsample::runtime
