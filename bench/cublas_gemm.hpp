// cublas_gemm.hpp: logits[N, V] = H[N, d] * W[V, d]^T with cuBLASLt, trying the
// heuristic's candidate algorithms once and keeping the fastest.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <memory>

#include "fusedsample/kernel_spec.hpp"

namespace fusedsample::bench {

class CublasGemm {
 public:
  // out_fp32: write fp32 logits (the unfused sampler's input) or bf16/fp16.
  CublasGemm(DType dtype, std::int64_t vocab, std::int64_t hidden, std::int64_t rows, bool out_fp32, CUstream stream);
  ~CublasGemm();
  void run(const void* weights, const void* hidden, void* logits);
  // Picks the fastest of up to `candidates` heuristic algorithms.
  void autotune(const void* weights, const void* hidden, void* logits, int candidates = 8);
  int algorithms_tried() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fusedsample::bench
