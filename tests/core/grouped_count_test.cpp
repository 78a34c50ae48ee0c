#include "volley/core/grouped_count.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace volley::core {
namespace {

TEST(FormatGrouped, GroupsOfThreeFromTheRight) {
  EXPECT_EQ(format_grouped(0), "0");
  EXPECT_EQ(format_grouped(999), "999");
  EXPECT_EQ(format_grouped(1000), "1,000");
  EXPECT_EQ(format_grouped(49995), "49,995");
  EXPECT_EQ(format_grouped(2310659), "2,310,659");
  EXPECT_EQ(format_grouped(std::numeric_limits<std::uint64_t>::max()),
            "18,446,744,073,709,551,615");
}

}  // namespace
}  // namespace volley::core
