#include "runtime/tensor_maps.hpp"

#include <fmt/format.h>

#include "fusedsample/errors.hpp"
#include "runtime/cuda_driver.hpp"

namespace fusedsample::runtime {

namespace {

CUtensorMapL2promotion l2_promotion_enum(int bytes, const char* name) {
  switch (bytes) {
    case 0: return CU_TENSOR_MAP_L2_PROMOTION_NONE;
    case 64: return CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
    case 128: return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
    case 256: return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  }
  throw InvalidArgument(fmt::format("tensor map for {}: L2 promotion of {} bytes (0, 64, 128 or 256)", name, bytes));
}

}  // namespace

CUtensorMap operand_tensor_map(const void* base, DType dtype, std::int64_t rows, std::int64_t hidden, int box_rows,
                               int box_cols, int l2_promotion, const char* name) {
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
  const CUtensorMapL2promotion promotion = l2_promotion_enum(l2_promotion, name);
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
      promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    driver::check(r, fmt::format("cuTensorMapEncodeTiled({}: [{}, {}] {}, box {} x {}, L2 promotion {})", name, rows,
                                 hidden, to_string(dtype), box_cols, box_rows, l2_promotion)
                         .c_str());
  return map;
}

const CUtensorMap& OperandMapCache::get(const void* base, DType dtype, std::int64_t rows, std::int64_t hidden,
                                        int box_rows, int box_cols, int l2_promotion, const char* name) {
  if (base_ != base || dtype_ != dtype || rows_ != rows || hidden_ != hidden || box_rows_ != box_rows ||
      box_cols_ != box_cols || l2_promotion_ != l2_promotion) {
    // the key changes only once it encoded
    map_ = operand_tensor_map(base, dtype, rows, hidden, box_rows, box_cols, l2_promotion, name);
    base_ = base;
    dtype_ = dtype;
    rows_ = rows;
    hidden_ = hidden;
    box_rows_ = box_rows;
    box_cols_ = box_cols;
    l2_promotion_ = l2_promotion;
  }
  return map_;
}

}  // namespace fusedsample::runtime
