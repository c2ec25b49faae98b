// cublas_gemm.hpp: logits[N, V] = H[N, d] * W[V, d]^T with cuBLASLt, timing
// every algorithm the heuristic returns (up to kMaxAlgorithms) and keeping the
// fastest. Until session 61 it asked for 16 and timed the first 8 only.
#pragma once
#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>

#include "fusedsample/kernel_spec.hpp"

namespace fusedsample::bench {

class CublasGemm {
 public:
  // out_fp32: write fp32 logits (the unfused sampler's input) or bf16/fp16.
  CublasGemm(DType dtype, std::int64_t vocab, std::int64_t hidden, std::int64_t rows, bool out_fp32, CUstream stream);
  ~CublasGemm();
  void run(const void* weights, const void* hidden, void* logits);
  static constexpr int kMaxAlgorithms = 64;
  // Picks the fastest (median of 15 back-to-back calls) of the heuristic's
  // algorithms, all of them by default; one that fails to launch is skipped.
  void autotune(const void* weights, const void* hidden, void* logits, int candidates = kMaxAlgorithms);
  int algorithms_tried() const;
  // The chosen algorithm: its rank in the heuristic's list (0 = its first
  // choice) and its cuBLASLt id, tile, stages and split-K, e.g.
  // "rank 3 of 21: id 66 tile 43 stages 20 splitk 1 (312.4 us)".
  std::string chosen_text() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fusedsample::bench
