#include "volley/analysis/value_list.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace volley::analysis {
namespace {

using Values = std::vector<std::string>;

TEST(ParseVaryTest, CommaList) {
  const VaryParse p = parse_vary("t=1,2,4");
  ASSERT_TRUE(p.vary) << p.error;
  EXPECT_EQ(p.vary->name, "t");
  EXPECT_EQ(p.vary->values, (Values{"1", "2", "4"}));
  EXPECT_EQ(p.vary->spacing, ValueSpacing::kList);
}

TEST(ParseVaryTest, ListMayHoldWordsAndOneValue) {
  EXPECT_EQ(parse_vary("proto=tcp,udp").vary->values, (Values{"tcp", "udp"}));
  EXPECT_EQ(parse_vary("t=8").vary->values, (Values{"8"}));
}

TEST(ParseVaryTest, GeometricRange) {
  const VaryParse p = parse_vary("t=1..4096x2");
  ASSERT_TRUE(p.vary) << p.error;
  ASSERT_EQ(p.vary->values.size(), 13U);
  EXPECT_EQ(p.vary->values.front(), "1");
  EXPECT_EQ(p.vary->values.back(), "4096");
  EXPECT_EQ(p.vary->spacing, ValueSpacing::kGeometric);
  // The end need not be reached exactly.
  EXPECT_EQ(parse_vary("t=3..100x3").vary->values, (Values{"3", "9", "27", "81"}));
}

TEST(ParseVaryTest, ArithmeticRange) {
  const VaryParse p = parse_vary("t=1..10+3");
  ASSERT_TRUE(p.vary) << p.error;
  EXPECT_EQ(p.vary->values, (Values{"1", "4", "7", "10"}));
  EXPECT_EQ(p.vary->spacing, ValueSpacing::kArithmetic);
  EXPECT_EQ(parse_vary("n=5..5+1").vary->values, (Values{"5"}));
}

TEST(ParseVaryTest, HugeRangeDoesNotOverflow) {
  const VaryParse p = parse_vary("t=1..9223372036854775807x2");
  ASSERT_TRUE(p.vary) << p.error;
  EXPECT_EQ(p.vary->values.size(), 63U);
}

TEST(ParseVaryTest, Errors) {
  for (const char* bad :
       {"t", "=1,2", "t=", "t=1,,2", "t=1,2,", "t=1..8", "t=a..8x2", "t=1..8x1", "t=1..8x0",
        "t=0..8x2", "t=1..8+0", "t=1..8+-1", "t=8..1x2", "t=1..8x2z", "t x=1", "t=1..100000+1"}) {
    const VaryParse p = parse_vary(bad);
    EXPECT_FALSE(p.vary) << bad;
    EXPECT_FALSE(p.error.empty()) << bad;
  }
  EXPECT_NE(parse_vary("t=8..1x2").error.find("above the end"), std::string::npos);
  EXPECT_NE(parse_vary("t=1..8").error.find("step"), std::string::npos);
}

TEST(NumbersTest, ToNumberAndAllNumeric) {
  EXPECT_EQ(to_number("4096"), 4096.0);
  EXPECT_EQ(to_number("1.5"), 1.5);
  EXPECT_FALSE(to_number("4k"));
  EXPECT_FALSE(to_number(""));
  EXPECT_TRUE(all_numeric({"1", "2.5"}));
  EXPECT_FALSE(all_numeric({"1", "tcp"}));
  EXPECT_FALSE(all_numeric({}));
}

}  // namespace
}  // namespace volley::analysis
