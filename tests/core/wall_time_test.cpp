#include "volley/core/wall_time.hpp"

#include <gtest/gtest.h>

namespace volley::core {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

TEST(ParseWallTime, Rfc3339InUtcAndWithOffsets) {
  // 2023-11-14T22:13:20Z is Unix 1700000000.
  EXPECT_EQ(parse_wall_time("2023-11-14T22:13:20Z").unix_ns, 1'700'000'000 * kSecond);
  EXPECT_EQ(parse_wall_time("2023-11-14t22:13:20z").unix_ns, 1'700'000'000 * kSecond);
  EXPECT_EQ(parse_wall_time("2023-11-14 22:13:20Z").unix_ns, 1'700'000'000 * kSecond);
  EXPECT_EQ(parse_wall_time("2023-11-15T00:13:20+02:00").unix_ns, 1'700'000'000 * kSecond);
  EXPECT_EQ(parse_wall_time("2023-11-14T21:43:20-00:30").unix_ns, 1'700'000'000 * kSecond);
  EXPECT_EQ(parse_wall_time("2023-11-14T22:13:20.25Z").unix_ns,
            1'700'000'000 * kSecond + 250'000'000);
  EXPECT_EQ(parse_wall_time("2023-11-14T22:13:20.123456789123Z").unix_ns,
            1'700'000'000 * kSecond + 123'456'789);
  EXPECT_EQ(parse_wall_time("1970-01-01T00:00:00Z").unix_ns, 0);
  EXPECT_EQ(parse_wall_time("2024-02-29T00:00:00Z").error, "");
}

TEST(ParseWallTime, UnixSecondsWithFraction) {
  EXPECT_EQ(parse_wall_time("1700000000").unix_ns, 1'700'000'000 * kSecond);
  EXPECT_EQ(parse_wall_time("1700000000.5").unix_ns, 1'700'000'000 * kSecond + 500'000'000);
  EXPECT_EQ(parse_wall_time("0.000000001").unix_ns, 1);
}

TEST(ParseWallTime, BadTextIsASentenceNamingWhatIsWrong) {
  for (const char* bad :
       {"", "now", "-5", "1700000000.", "17e8", "1.2.3", "2023-11-14", "2023-11-14T22:13:20",
        "2023-11-14T22:13Z", "2023-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2023-11-14T24:00:00Z",
        "2023-11-14T23:59:60Z", "2023-11-14T22:13:20+2", "2023-11-14T22:13:20Zjunk",
        "2023-11-14T22:13:20.Z", "99999999999999999999999"}) {
    const WallTimeParse p = parse_wall_time(bad);
    EXPECT_FALSE(p.unix_ns.has_value()) << bad;
    EXPECT_FALSE(p.error.empty()) << bad;
  }
  EXPECT_NE(parse_wall_time("2023-11-14T22:13:20").error.find("time zone"), std::string::npos);
  EXPECT_NE(parse_wall_time("2023-11-14T23:59:60Z").error.find("leap"), std::string::npos);
}

TEST(CheckStartTime, PastAndTooFarAheadAreRefused) {
  const std::int64_t now = 1'700'000'000 * kSecond;
  EXPECT_EQ(check_start_time(now + 2 * kSecond, now), "");
  EXPECT_EQ(check_start_time(now + 24 * 3600 * kSecond, now), "");
  EXPECT_NE(check_start_time(now, now).find("in the past"), std::string::npos);
  EXPECT_NE(check_start_time(now - kSecond, now).find("1.000 s in the past"), std::string::npos);
  EXPECT_NE(check_start_time(now + 24 * 3600 * kSecond + 1, now).find("at most 24 h"),
            std::string::npos);
}

}  // namespace
}  // namespace volley::core
