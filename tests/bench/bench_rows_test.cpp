// bench_rows_test.cpp: fusedsample_bench allocates its inputs for the largest
// batch it times (bench/bench_rows.hpp). Until session 35 it allocated 256 rows
// whatever --fs_rows asked for, and N = 300 read past H (an illegal address on
// the H200).
#include "bench/bench_rows.hpp"

#include <gtest/gtest.h>

namespace fusedsample::bench {
namespace {

TEST(BenchRows, InputsCoverTheLargestBatchTimed) {
  EXPECT_EQ(data_rows({1, 2, 4}), 256);
  EXPECT_EQ(data_rows({257, 300, 1024, 512}), 1024);
  EXPECT_EQ(data_rows({}), 256);
}

TEST(BenchRows, ParsesPositiveBatchSizes) {
  EXPECT_EQ(parse_rows("1,300,1024"), (std::vector<std::int64_t>{1, 300, 1024}));
  for (const char* bad : {"", "0", "-4", "8,x", "12abc", "1,,2"}) EXPECT_THROW(parse_rows(bad), std::invalid_argument) << bad;
}

}  // namespace
}  // namespace fusedsample::bench
