// bench_tables.hpp: what one fusedsample_bench run measured, and the markdown
// tables it prints at the end (and writes to --fs_table) for BENCHMARKS.md:
// per shape the four lines' medians by N with their ratios, the medians by
// the line run just before (--fs_by_predecessor), and the forced configs
// (--fs_specs) with their ratios to the same call's floor and cuBLAS, and the
// logits sampler alone (--fs_logits_specs).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace fusedsample::bench {

// Median µs of the four lines of one (shape, N); 0: not measured.
struct LineTimes {
  double floor = 0, fused = 0, cublas = 0, unfused = 0;
};

// The lines of an interleaved call, in call-order index order; forced configs follow them.
inline constexpr const char* kLineNames[] = {"floor", "cuBLAS", "unfused", "fused"};
inline constexpr std::size_t kMainLines = sizeof(kLineNames) / sizeof(kLineNames[0]);

// [line][line before it] -> median µs (0: that pair never ran).
using PredecessorTable = std::vector<std::vector<double>>;

struct Results {
  using ShapeKey = std::pair<std::int64_t, std::int64_t>;  // (V, d)
  std::map<ShapeKey, std::map<std::int64_t, LineTimes>> lines;                // (V, d) -> N -> medians
  std::map<ShapeKey, std::map<std::int64_t, PredecessorTable>> by_predecessor;  // (V, d) -> N -> table
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::map<std::string, double>>
      sweep;  // (V, d, N) -> forced spec -> median µs
  // (V, d, N) -> the chosen cuBLASLt algorithms (CublasGemm::chosen_text) of
  // the cuBLAS line (bf16 logits) and of the unfused line's GEMM (fp32 logits).
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::pair<std::string, std::string>>
      cublas_algorithms;
  // (V, d, N) -> sample_logits config ("default" or a --fs_logits_specs spec) -> median µs of
  // sample_logits alone over the fp32 logits the unfused line's GEMM wrote.
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::map<std::string, double>> logits_alone;
};

// "### V=…, d=… (bf16), median µs" (the dtype given) and the table of N, the four lines,
// fused over each of the other three and fused GB/s (W's V d 2 bytes once per call);
// rows without a fused time are left out.
std::string summary_table(const Results& r, std::string_view dtype = "bf16");
// Which cuBLASLt algorithm each (shape, N) ran for the cuBLAS line and the
// unfused line's GEMM (empty when none was recorded).
std::string cublas_table(const Results& r);
// The --fs_by_predecessor tables (empty without them).
std::string predecessor_table(const Results& r);
// The forced configs' table (empty without them); × cuBLAS only when the configs ran in the
// same interleaved call as cuBLAS (`same_call`).
std::string sweep_table(const Results& r, bool same_call);
// The --fs_logits_specs table (empty without them): sample_logits alone, µs and
// the GB/s of reading N V 4 bytes of logits once.
std::string logits_alone_table(const Results& r);

}  // namespace fusedsample::bench
