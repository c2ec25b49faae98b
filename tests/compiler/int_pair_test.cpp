// int_pair_test.cpp: detail::parse_int_pair, which reads compute capabilities
// ("9.0") in tuning files and --warps ("4x1"): whole text only, and numbers
// that do not fit an int refused rather than wrapped.
#include <gtest/gtest.h>

#include <utility>

#include "compiler/int_pair.hpp"

namespace {

using fusedsample::detail::parse_int_pair;

TEST(IntPair, ReadsTwoIntsAroundTheSeparator) {
  EXPECT_EQ(parse_int_pair("9.0", '.'), std::pair(9, 0));
  EXPECT_EQ(parse_int_pair("12x3", 'x'), std::pair(12, 3));
  EXPECT_EQ(parse_int_pair("-4x1", 'x'), std::pair(-4, 1));  // the caller checks the range
  EXPECT_EQ(parse_int_pair("2147483647.1", '.'), std::pair(2147483647, 1));
}

TEST(IntPair, RefusesAnythingElse) {
  for (const char* bad : {"", "9", "9.", ".0", "9.0x", "9..0", " 9.0", "9 .0", "+9.0", "9,0"})
    EXPECT_FALSE(parse_int_pair(bad, '.')) << "'" << bad << "'";
  for (const char* bad : {"x1", "4x", "4x1x", "4y1", "4 x1"}) EXPECT_FALSE(parse_int_pair(bad, 'x')) << "'" << bad << "'";
  EXPECT_FALSE(parse_int_pair("4294967305.0", '.'));  // sscanf's %d read 9.0
  EXPECT_FALSE(parse_int_pair("4294967300x1", 'x'));  // sscanf's %d read 4x1
  EXPECT_FALSE(parse_int_pair("1x2147483648", 'x'));
}

}  // namespace
