// bench_tables_test.cpp: the markdown tables fusedsample_bench prints for
// BENCHMARKS.md (bench/bench_tables.hpp): every ratio is fused over the named
// line of the same (shape, N), GB/s is W's bytes over the fused time, a row
// without a fused time is left out, and a forced config's × cuBLAS appears only
// when it ran in cuBLAS's call.
#include "bench/bench_tables.hpp"

#include <gtest/gtest.h>

#include <string>

namespace fusedsample::bench {
namespace {

Results two_rows() {
  Results r;
  r.lines[{1000, 64}][1] = LineTimes{10.0, 11.0, 20.0, 22.0};  // floor, fused, cuBLAS, unfused
  r.lines[{1000, 64}][2] = LineTimes{10.0, 0.0, 20.0, 22.0};   // no fused time
  return r;
}

TEST(BenchTables, SummaryRowsAreFusedOverEachLine) {
  const std::string t = summary_table(two_rows());
  EXPECT_NE(t.find("### V=1000, d=64 (bf16), median µs"), std::string::npos) << t;
  // 1000 x 64 bf16 = 128000 bytes in 11 µs: 11.6 GB/s.
  EXPECT_NE(t.find("| 1 | 11.0 | 10.0 | 20.0 | 22.0 | 1.100 | 0.550 | 0.500 | 12 |"), std::string::npos) << t;
  EXPECT_EQ(t.find("| 2 |"), std::string::npos) << "a row without a fused time is printed:\n" << t;
}

// The chosen cuBLASLt algorithms are printed per (shape, N), both GEMMs; none
// recorded prints nothing (until session 61 the choice was never reported).
TEST(BenchTables, CublasTableNamesEachChosenAlgorithm) {
  Results r;
  EXPECT_EQ(cublas_table(r), "");
  r.cublas_algorithms[{1000, 64, 128}] = {"rank 3 of 21: id 66", "rank 0 of 19: id 12"};
  const std::string t = cublas_table(r);
  EXPECT_NE(t.find("| 1000 | 64 | 128 | rank 3 of 21: id 66 | rank 0 of 19: id 12 |"), std::string::npos) << t;
}

TEST(BenchTables, SummaryHeadingNamesTheDtype) {
  const std::string t = summary_table(two_rows(), "fp16");
  EXPECT_NE(t.find("### V=1000, d=64 (fp16), median µs"), std::string::npos) << t;
}

TEST(BenchTables, SummaryWithoutAFloorPrintsNoInfinity) {
  Results r;
  r.lines[{1000, 64}][4] = LineTimes{0.0, 11.0, 0.0, 0.0};
  const std::string t = summary_table(r);
  EXPECT_NE(t.find("| 4 | 11.0 | 0.0 | 0.0 | 0.0 | 0.000 | 0.000 | 0.000 | 12 |"), std::string::npos) << t;
  EXPECT_EQ(t.find("inf"), std::string::npos) << t;
}

TEST(BenchTables, SweepRatiosAreToTheSameCall) {
  Results r = two_rows();
  r.sweep[{1000, 64, 1}]["bf16 sm_90 mma_sync tv64 tn8 td128 s4 w4x1"] = 12.5;
  r.sweep[{2000, 64, 1}]["bf16 sm_90 mma_sync tv64 tn8 td128 s4 w4x1"] = 30.0;  // shape without a floor line
  const std::string interleaved = sweep_table(r, true), sequential = sweep_table(r, false);
  EXPECT_NE(interleaved.find("| 1000 | 64 | 1 | bf16 sm_90 mma_sync tv64 tn8 td128 s4 w4x1 | 12.5 | 1.250 | 0.625 |"),
            std::string::npos)
      << interleaved;
  EXPECT_NE(sequential.find("| 1000 | 64 | 1 | bf16 sm_90 mma_sync tv64 tn8 td128 s4 w4x1 | 12.5 | 1.250 | n/a |"),
            std::string::npos)
      << sequential;
  EXPECT_NE(interleaved.find("| 2000 | 64 | 1 | bf16 sm_90 mma_sync tv64 tn8 td128 s4 w4x1 | 30.0 | n/a (floor not run) | n/a |"),
            std::string::npos)
      << interleaved;
  EXPECT_TRUE(r.lines.find({2000, 64}) == r.lines.end()) << "printing the table added a shape";
  EXPECT_EQ(sweep_table(two_rows(), true), "") << "no forced configs, no table";
}

// --fs_logits_specs (session 62): sample_logits alone, with the GB/s of reading N x V x 4 bytes once.
TEST(BenchTables, LogitsAloneTableGivesTheLogitsBandwidth) {
  Results r;
  EXPECT_EQ(logits_alone_table(r), "") << "no --fs_logits_specs, no table";
  r.logits_alone[{1000, 64, 8}]["fp32 sm_90 logits tv256 tn8 td64 s3 w4x1"] = 16.0;  // 32000 bytes in 16 µs
  const std::string t = logits_alone_table(r);
  EXPECT_NE(t.find("| 1000 | 64 | 8 | fp32 sm_90 logits tv256 tn8 td64 s3 w4x1 | 16.0 | 2 |"), std::string::npos) << t;
}

TEST(BenchTables, PredecessorTableMarksPairsThatNeverRan) {
  Results r;
  PredecessorTable& p = r.by_predecessor[{1000, 64}][8];
  p.assign(kMainLines, std::vector<double>(kMainLines, 0.0));
  p[3][1] = 11.25;  // fused after cuBLAS
  const std::string t = predecessor_table(r);
  EXPECT_NE(t.find("| N | line | after floor | after cuBLAS | after unfused | after fused |"), std::string::npos) << t;
  EXPECT_NE(t.find("| 8 | fused | - | 11.2 | - | - |"), std::string::npos) << t;
  EXPECT_NE(t.find("| 8 | floor | - | - | - | - |"), std::string::npos) << t;
}

}  // namespace
}  // namespace fusedsample::bench
