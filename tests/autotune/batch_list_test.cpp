// batch_list_test.cpp: `--batches` text -> batch buckets, and each bucket's
// tuning row count.
#include <gtest/gtest.h>

#include <string>

#include "fusedsample/errors.hpp"
#include "fusedsample/tuner.hpp"
#include "fusedsample/tuning_db.hpp"

namespace fs = fusedsample;

TEST(BatchList, RangeCoversEveryBucketInIt) {
  EXPECT_EQ(fs::parse_batch_list("1-256"), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(fs::parse_batch_list("129-200"), (std::vector<int>{8, 9, 10}));  // buckets 160, 192, 224
  EXPECT_EQ(fs::parse_batch_list("8-32"), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(fs::parse_batch_list("3-5"), (std::vector<int>{2, 3}));  // 3 -> bucket 4, 5 -> bucket 8
  EXPECT_EQ(fs::parse_batch_list("1-1000"), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  // Past 256 rows the bucket of a part, which falls and rises with the rows:
  // 200 -> 224, 225-256 -> 256, 257-300 -> two parts of 129-150 (160): not 192.
  EXPECT_EQ(fs::parse_batch_list("200-300"), (std::vector<int>{8, 10, 11}));
  EXPECT_EQ(fs::parse_batch_list("200-322"), (std::vector<int>{8, 9, 10, 11}));  // 322: two of 161
  EXPECT_EQ(fs::parse_batch_list("257-300"), (std::vector<int>{8}));
  EXPECT_EQ(fs::parse_batch_list("5000-100000000"), (std::vector<int>{11}));  // parts of 227..256 rows
  EXPECT_EQ(fs::parse_batch_list("1537-1537"), (std::vector<int>{10}));      // 7 parts of 220
  EXPECT_EQ(fs::parse_batch_list("4-4"), (std::vector<int>{2}));
}

TEST(BatchList, ListsAreSortedWithoutDuplicates) {
  EXPECT_EQ(fs::parse_batch_list("1,8,64"), (std::vector<int>{0, 3, 6}));
  EXPECT_EQ(fs::parse_batch_list("64,8,7,1"), (std::vector<int>{0, 3, 6}));
  EXPECT_EQ(fs::parse_batch_list("1,2-4,300"), (std::vector<int>{0, 1, 2, 8}));
  EXPECT_EQ(fs::parse_batch_list("16"), (std::vector<int>{4}));
}

TEST(BatchList, BadTextIsRefusedWithAMessage) {
  for (const char* bad : {"", "0", "3-2", "1,,2", "1,", "-4", "a", "1-", "2x", "1-2-3", "-1-4"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(fs::parse_batch_list(bad), fs::InvalidArgument);
  }
  try {
    fs::parse_batch_list("3-2");
  } catch (const fs::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("3 > 2"), std::string::npos) << e.what();
  }
}

TEST(BatchList, BucketRows) {
  EXPECT_EQ(fs::bucket_rows(0), 1);
  EXPECT_EQ(fs::bucket_rows(3), 8);
  EXPECT_EQ(fs::bucket_rows(7), 128);
  EXPECT_EQ(fs::bucket_rows(8), 160);
  EXPECT_EQ(fs::bucket_rows(9), 192);
  EXPECT_EQ(fs::bucket_rows(10), 224);
  EXPECT_EQ(fs::bucket_rows(11), 256);
  for (int b = 0; b < fs::kNumBatchBuckets; ++b) {
    EXPECT_EQ(fs::batch_bucket(fs::bucket_rows(b)), b);
    EXPECT_EQ(fs::batch_bucket_label(b), std::to_string(fs::bucket_rows(b)));
    if (b > 0) EXPECT_EQ(fs::batch_bucket(fs::bucket_rows(b - 1) + 1), b);
  }
  EXPECT_THROW(fs::bucket_rows(fs::kNumBatchBuckets), fs::InvalidArgument);
  EXPECT_THROW(fs::bucket_rows(-1), fs::InvalidArgument);
}
