#include "volley/report/units_format.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace volley::report {
namespace {

TEST(FormatBytes, BinaryPrefixes) {
  EXPECT_EQ(format_bytes(0), "0B");
  EXPECT_EQ(format_bytes(1023), "1023B");
  EXPECT_EQ(format_bytes(1536), "1.50KB");
  EXPECT_EQ(format_bytes(3 * 1024 * 1024 / 2), "1.50MB");
  EXPECT_EQ(format_bytes(59'077'591), "56.34MB");
  EXPECT_EQ(format_bytes(std::uint64_t{2} << 30), "2.00GB");
}

TEST(FormatBitsPerS, DecimalPrefixes) {
  EXPECT_EQ(format_bits_per_s(0), "0b/s");
  EXPECT_EQ(format_bits_per_s(999), "999.00b/s");
  EXPECT_EQ(format_bits_per_s(72.70e6), "72.70Mb/s");
  EXPECT_EQ(format_bits_per_s(1.5e9), "1.50Gb/s");
  EXPECT_EQ(format_bits_per_s(-5), "0b/s");
  EXPECT_EQ(format_bits_per_s(std::numeric_limits<double>::quiet_NaN()), "0b/s");
}

TEST(FormatCount, DecimalPrefixes) {
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(12.5), "12.50");
  EXPECT_EQ(format_count(141'990), "141.99k");
  EXPECT_EQ(format_count(2.5e6), "2.50M");
}

TEST(FormatNs, AdaptiveUnitThreeDigits) {
  EXPECT_EQ(format_ns(std::uint64_t{0}), "0ns");
  EXPECT_EQ(format_ns(std::uint64_t{881}), "881ns");
  EXPECT_EQ(format_ns(std::uint64_t{27'100}), "27.1us");
  EXPECT_EQ(format_ns(std::uint64_t{393'210}), "393us");
  EXPECT_EQ(format_ns(std::uint64_t{3'970'000}), "3.97ms");
  EXPECT_EQ(format_ns(999'999.0), "1.00ms");  // never "1000us"
  EXPECT_EQ(format_ns(7.31e9), "7.31s");
  EXPECT_EQ(format_ns(1234e9), "1234s");
}

TEST(FormatPct, AbsentIsDash) {
  EXPECT_EQ(format_pct(1.0), "1.00%");
  EXPECT_EQ(format_pct(-0.014), "-0.01%");
  EXPECT_EQ(format_pct(std::nullopt), "-");
}

}  // namespace
}  // namespace volley::report
