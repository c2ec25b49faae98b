// tensor_maps.hpp: the tensor maps (CUtensorMap) through which the TMA-fed
// kernels (wgmma_ws, wgmma_coop) copy their operand tiles: a row-major
// [rows, d] bf16/fp16 operand, boxes of `box_cols` columns by `box_rows` rows
// with the swizzle of their row bytes (64 columns: 128-byte swizzle; 32
// columns: 64-byte swizzle, wgmma_coop with T_d = 32), zeros outside the tensor,
// and the L2 promotion of the spec (KernelSpec::l2_promotion: 0, 64, 128 or 256 bytes).
#pragma once
#include <cuda.h>

#include <cstdint>

#include "fusedsample/kernel_spec.hpp"

namespace fusedsample::runtime {

// Throws InvalidArgument for shapes the copy engine cannot address and
// CudaError (with the call and the shape) if the driver refuses the map.
CUtensorMap operand_tensor_map(const void* base, DType dtype, std::int64_t rows, std::int64_t hidden, int box_rows,
                               int box_cols, int l2_promotion, const char* name);

// The last map of one operand, re-encoded only when its base, rows or box
// change (the weights of a Sampler, and usually its hidden-state buffer, stay
// put from call to call). Not thread-safe: one per Sampler, which is used
// from one thread at a time.
class OperandMapCache {
 public:
  const CUtensorMap& get(const void* base, DType dtype, std::int64_t rows, std::int64_t hidden, int box_rows,
                         int box_cols, int l2_promotion, const char* name);

 private:
  const void* base_ = nullptr;
  DType dtype_ = DType::bf16;
  std::int64_t rows_ = 0, hidden_ = 0;
  int box_rows_ = 0, box_cols_ = 0, l2_promotion_ = 0;
  CUtensorMap map_{};
};

}  // namespace fusedsample::runtime
