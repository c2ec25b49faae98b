// reference_problem.hpp: hand-built inputs of the CPU reference sampler
// tests (tests/reference/reference_*_test.cpp). With d = 8 and hidden row
// n = e_c, logit_v = W[v][c] exactly (fp32 storage, one nonzero product), so
// the tests compute every expectation from the logits they chose.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fusedsample/kernel_spec.hpp"
#include "fusedsample/reference.hpp"

namespace fusedsample::testing::reference_tests {

inline constexpr int kD = 8;

// W [V, 8] with column c holding logits[c] (other columns zero).
struct Problem {
  std::int64_t vocab;
  std::vector<float> W;
  std::vector<float> H;  // [N, 8]
  std::vector<ReferenceRowParams> params;

  explicit Problem(std::int64_t v) : vocab(v), W(std::size_t(v) * kD, 0.0f) {}
  void set_column(int c, const std::vector<float>& logits) {
    for (std::int64_t v = 0; v < vocab; ++v) W[std::size_t(v) * kD + c] = logits[std::size_t(v)];
  }
  // A batch row whose logits are column c, sampled with (tau, seed, offset).
  void add_row(int c, float tau, std::uint64_t seed, std::uint64_t offset) {
    for (int k = 0; k < kD; ++k) H.push_back(k == c ? 1.0f : 0.0f);
    params.push_back({tau, seed, offset});
  }
  std::int64_t rows() const { return std::int64_t(params.size()); }
  std::vector<ReferenceResult> run(int samples) const {
    return reference_sample(W.data(), H.data(), DType::fp32, vocab, kD, rows(), params, samples);
  }
};

}  // namespace fusedsample::testing::reference_tests
