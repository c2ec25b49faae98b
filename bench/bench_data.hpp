// bench_data.hpp: device-resident random inputs for one LM-head shape.
#pragma once
#include <cstdint>
#include <memory>

#include "fusedsample/kernel_spec.hpp"
#include "runtime/device_memory.hpp"

namespace fusedsample::bench {

struct Shape {
  std::int64_t vocab;
  std::int64_t hidden;
};

struct ShapeData {
  Shape shape;
  DType dtype;
  std::int64_t max_rows;
  runtime::DeviceMemory weights;  // [V, d], N(0, 1) values
  runtime::DeviceMemory hidden;   // [max_rows, d], N(0, logit_std^2 / d): logits ~ N(0, logit_std^2)
  runtime::DeviceMemory logits;   // [max_rows, V] fp32, for the unfused pipeline
  runtime::DeviceMemory out;      // [max_rows, max_samples] int64
  runtime::DeviceMemory seeds;    // [max_rows] uint64, a distinct seed per row (--fs_seeds=rows)
  std::size_t weight_bytes() const { return std::size_t(shape.vocab * shape.hidden) * dtype_size(dtype); }
};

// Random (never zero) data filled on the host with a fast counter-based hash,
// in parallel, then uploaded once.
std::unique_ptr<ShapeData> make_shape_data(Shape shape, DType dtype, std::int64_t max_rows, float logit_std = 1.0f,
                                           int max_samples = 1);

}  // namespace fusedsample::bench
