// A paced transaction's schedule (src/engine/paced_schedule.hpp): the strands' phases spread over
// one period, and the count of iterations the schedule asks for within a step.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "../../src/engine/paced_schedule.hpp"

namespace volley::engine {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

TEST(PacedSchedule, FourStrandsAtTenASecondStartAQuarterPeriodApart) {
  std::vector<nanoseconds> first;
  for (std::uint64_t k = 0; k < 4; ++k) first.emplace_back(PacedSchedule(10, k, 4).offset(0));
  EXPECT_EQ(first[0], milliseconds(0));
  EXPECT_EQ(first[1], milliseconds(25));
  EXPECT_EQ(first[2], milliseconds(50));
  EXPECT_EQ(first[3], milliseconds(75));
  // Each strand's own iterations stay a period apart.
  const PacedSchedule third(10, 2, 4);
  EXPECT_EQ(third.offset(1) - third.offset(0), milliseconds(100));
  EXPECT_EQ(third.offset(9), milliseconds(950));
}

TEST(PacedSchedule, OneStrandStartsAtTheStepsStart) {
  EXPECT_EQ(PacedSchedule(1000, 0, 1).offset(0), nanoseconds(0));
  EXPECT_EQ(PacedSchedule(1000, 0, 1).offset(3), milliseconds(3));
}

TEST(PacedSchedule, CountsTheIntendedStartsBeforeTheStepsEnd) {
  // Four strands at 10 a second for a second: starts at 0, 25, 50, 75 ms, then every 100 ms;
  // each strand's tenth start (900 to 975 ms) is within the second, its eleventh is not.
  std::uint64_t total = 0;
  for (std::uint64_t k = 0; k < 4; ++k) {
    EXPECT_EQ(PacedSchedule(10, k, 4).intended_before(milliseconds(1000)), 10U) << "strand " << k;
    total += PacedSchedule(10, k, 4).intended_before(milliseconds(1000));
  }
  EXPECT_EQ(total, 40U);
  // A start exactly at the end is not within the step.
  EXPECT_EQ(PacedSchedule(10, 0, 1).intended_before(milliseconds(1000)), 10U);
  EXPECT_EQ(PacedSchedule(10, 0, 1).intended_before(milliseconds(1001)), 11U);
  // A step shorter than a strand's phase asks nothing of it.
  EXPECT_EQ(PacedSchedule(10, 3, 4).intended_before(milliseconds(75)), 0U);
  EXPECT_EQ(PacedSchedule(10, 3, 4).intended_before(milliseconds(76)), 1U);
  EXPECT_EQ(PacedSchedule(10, 0, 4).intended_before(nanoseconds(0)), 0U);
}

TEST(PacedSchedule, TheCountMatchesTheOffsetsAtAwkwardRates) {
  // 200,000 strands at 0.2 a second for 60 s: 12 each (every 5 s, from their phase on).
  EXPECT_EQ(PacedSchedule(0.2, 0, 200000).intended_before(std::chrono::seconds(60)), 12U);
  EXPECT_EQ(PacedSchedule(0.2, 199999, 200000).intended_before(std::chrono::seconds(60)), 12U);
  for (const double rate : {3.0, 7.0, 1000.0 / 3.0, 2000.0}) {
    for (std::uint64_t k = 0; k < 7; ++k) {
      const PacedSchedule s(rate, k, 7);
      const nanoseconds length = milliseconds(300);
      const std::uint64_t n = s.intended_before(length);
      if (n > 0) {
        EXPECT_LT(s.offset(n - 1), length) << rate << " " << k;
      }
      EXPECT_GE(s.offset(n), length) << rate << " " << k;
    }
  }
}

}  // namespace
}  // namespace volley::engine
