#include "volley/core/units.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace volley::core {
namespace {

using namespace std::chrono_literals;

TEST(ParseSize, SuffixesAreBinaryAndCaseInsensitive) {
  EXPECT_EQ(parse_size("64").value, 64U);
  EXPECT_EQ(parse_size("8b").value, 8U);
  EXPECT_EQ(parse_size("8k").value, 8192U);
  EXPECT_EQ(parse_size("8K").value, 8192U);
  EXPECT_EQ(parse_size("2m").value, 2U << 20U);
  EXPECT_EQ(parse_size("3g").value, 3ULL << 30U);
  EXPECT_EQ(parse_size("1T").value, 1ULL << 40U);
  EXPECT_EQ(parse_size(" 50k ").value, 51200U);
  EXPECT_EQ(parse_size("0").value, 0U);
}

TEST(ParseSize, DecimalsMustGiveWholeBytes) {
  EXPECT_EQ(parse_size("1.5k").value, 1536U);
  EXPECT_EQ(parse_size("0.5m").value, 512U * 1024U);
  EXPECT_EQ(parse_size("2.0").value, 2U);
  const auto r = parse_size("1.3k");
  EXPECT_FALSE(r.value);
  EXPECT_EQ(r.error, "invalid size '1.3k': not a whole number");
}

TEST(ParseSize, RejectsBadInputWithAMessage) {
  EXPECT_EQ(parse_size("").error, "empty size");
  EXPECT_EQ(parse_size("-1").error, "invalid size '-1': must not be negative");
  EXPECT_EQ(parse_size("abc").error, "invalid size 'abc': expected a number");
  EXPECT_EQ(parse_size("12q").error,
            "invalid size '12q': unknown suffix 'q' (use b, k, m, g or t)");
  EXPECT_EQ(parse_size("8kb").error,
            "invalid size '8kb': unknown suffix 'kb' (use b, k, m, g or t)");
  EXPECT_FALSE(parse_size("8k").value == std::nullopt);
  EXPECT_TRUE(parse_size("8k").error.empty());
}

TEST(ParseSize, Detects64BitOverflow) {
  EXPECT_EQ(parse_size("18446744073709551615").value, 18446744073709551615ULL);
  EXPECT_EQ(parse_size("18446744073709551616").error,
            "size '18446744073709551616' is too large (the limit is 2^64-1)");
  EXPECT_FALSE(parse_size("16777216t").value);  // 2^24 * 2^40 = 2^64
  EXPECT_EQ(parse_size("16777215t").value, 16777215ULL << 40U);
  EXPECT_FALSE(parse_size("99999999999999999999999999999999k").value);
}

TEST(ParseCount, UsesCountInMessages) {
  EXPECT_EQ(parse_count("1k").value, 1024U);
  EXPECT_EQ(parse_count("x").error, "invalid count 'x': expected a number");
}

TEST(ParseDuration, Units) {
  EXPECT_EQ(parse_duration("10").value, 10s);
  EXPECT_EQ(parse_duration("10s").value, 10s);
  EXPECT_EQ(parse_duration("250ms").value, 250ms);
  EXPECT_EQ(parse_duration("5us").value, 5us);
  EXPECT_EQ(parse_duration("7ns").value, 7ns);
  EXPECT_EQ(parse_duration("2min").value, 2min);
  EXPECT_EQ(parse_duration("1h").value, 1h);
  EXPECT_EQ(parse_duration("1.5s").value, 1500ms);
  EXPECT_EQ(parse_duration("30S").value, 30s);
  EXPECT_EQ(parse_duration("0").value, 0s);
  EXPECT_TRUE(parse_duration("10s").warning.empty());
}

TEST(ParseDuration, LoneMIsMillisecondsWithAWarning) {
  const auto r = parse_duration("30m");
  EXPECT_EQ(r.value, 30ms);
  EXPECT_EQ(r.warning, "'30m' is read as milliseconds (as uperf does); write '30ms' or '30min'");
}

TEST(ParseDuration, Errors) {
  EXPECT_EQ(parse_duration("5x").error,
            "invalid duration '5x': unknown unit 'x' (use ns, us, ms, s, min or h)");
  EXPECT_EQ(parse_duration("1mins").error,
            "invalid duration '1mins': unknown unit 'mins' (use ns, us, ms, s, min or h)");
  EXPECT_EQ(parse_duration("").error, "empty duration");
  EXPECT_EQ(parse_duration("-3s").error, "invalid duration '-3s': must not be negative");
  EXPECT_EQ(parse_duration("s").error, "invalid duration 's': expected a number");
  EXPECT_EQ(parse_duration("999999999999h").error,
            "duration '999999999999h' is too long: the most is 8760h (365 days)");
  // Beyond what the clock can add to now without overflowing: refused, never wrapped to 0.
  EXPECT_FALSE(parse_duration("2562047h").value.has_value());
  EXPECT_TRUE(parse_duration("8760h").value.has_value());
  EXPECT_FALSE(parse_duration("8761h").value.has_value());
  EXPECT_FALSE(parse_duration("18446744073709551616").value);
}

TEST(ParseDuration, UperfSyntaxReadsTheFirstLetterOfAUnitWithAWarning) {
  const auto uperf = [](std::string_view text) {
    return parse_duration(text, DurationSyntax::kUperf);
  };
  EXPECT_EQ(uperf("1min").value, 1ms) << "uperf's 1min is 1 ms";
  EXPECT_EQ(uperf("1min").warning,
            "'1min' is read as 1ms, as uperf reads it (only the first letter of a unit counts); "
            "write '1ms' (or seconds for minutes)");
  EXPECT_EQ(uperf("10sec").value, 10s);
  EXPECT_EQ(uperf("10sec").warning,
            "'10sec' is read as 10s, as uperf reads it (only the first letter of a unit counts); "
            "write '10s'");
  EXPECT_EQ(uperf("5usec").value, 5us);
  EXPECT_EQ(uperf("7nsec").value, 7ns);
  // Units both read the same way carry no warning; hours are volley's own.
  for (const char* text : {"10", "10s", "250ms", "5us", "7ns", "1h"}) {
    EXPECT_EQ(uperf(text).value, parse_duration(text).value) << text;
    EXPECT_TRUE(uperf(text).warning.empty()) << text;
  }
  EXPECT_FALSE(uperf("5x").value);
  EXPECT_EQ(parse_duration("1min").value, 1min) << "the command line keeps minutes";
}

TEST(ParseRate, SizeSuffixesAndPerSecond) {
  EXPECT_DOUBLE_EQ(*parse_rate("100").value, 100.0);
  EXPECT_DOUBLE_EQ(*parse_rate("1k").value, 1024.0);
  EXPECT_DOUBLE_EQ(*parse_rate("10k/s").value, 10240.0);
  EXPECT_DOUBLE_EQ(*parse_rate("2.5").value, 2.5);
  EXPECT_EQ(parse_rate("fast").error, "invalid rate 'fast': expected a number");
  EXPECT_EQ(parse_rate("5q").error, "invalid rate '5q': unknown suffix 'q' (use k, m, g or t)");
  EXPECT_EQ(parse_rate("-5").error, "invalid rate '-5': must not be negative");
}

TEST(FormatBytes, ExactFigureAndShortForm) {
  EXPECT_EQ(format_bytes(64), "64");
  EXPECT_EQ(format_bytes(1000), "1000");
  EXPECT_EQ(format_bytes(1024), "1024 (1k)");
  EXPECT_EQ(format_bytes(65536), "65536 (64k)");
  EXPECT_EQ(format_bytes(1536), "1536") << "not exact in k: keep the plain figure";
  EXPECT_EQ(format_bytes(3ULL << 30U), "3221225472 (3g)");
}

TEST(FormatDuration, LargestExactUnit) {
  EXPECT_EQ(format_duration(0s), "0s");
  EXPECT_EQ(format_duration(10s), "10s");
  EXPECT_EQ(format_duration(1500ms), "1500ms");
  EXPECT_EQ(format_duration(120s), "120s") << "never min: profiles read it as uperf does";
  EXPECT_EQ(format_duration(90s), "90s");
  EXPECT_EQ(format_duration(2h), "2h");
  EXPECT_EQ(format_duration(7ns), "7ns");
}

TEST(Units, RoundTrip) {
  for (const char* text : {"1s", "250ms", "180s", "5us", "1h"}) {
    EXPECT_EQ(format_duration(*parse_duration(text).value), text);
    EXPECT_EQ(format_duration(*parse_duration(text, DurationSyntax::kUperf).value), text);
  }
}

}  // namespace
}  // namespace volley::core
