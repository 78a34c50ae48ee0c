#pragma once
/// \file
/// Human-readable figures for the text reports, in uperf's conventions: byte counts with
/// 1024-based prefixes ("56.34MB"), bit rates and counts per second with 1000-based prefixes
/// ("72.70Mb/s", "141.99k"), durations with an adaptive unit ("27.1us"). Pure functions, any
/// thread. (core/units.hpp formats option values for echoing profiles; these format results.)

#include <cstdint>
#include <optional>
#include <string>

namespace volley::report {

/// Bytes with a 1024-based prefix and two decimals: "0B", "512B", "1.50KB", "56.34MB", "2.00GB",
/// "1.10TB" (at most 9 characters below 1024 TB).
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);

/// Bits per second with a 1000-based prefix and two decimals: "0b/s", "999.00b/s", "72.70Mb/s",
/// "1.23Gb/s" (at most 10 characters below 1000 Tb/s). Negative or NaN input reads as 0.
[[nodiscard]] std::string format_bits_per_s(double bits_per_s);

/// A count or a count per second with a 1000-based prefix: "0", "12.50", "999.99", "141.99k",
/// "1.23M", "4.56G" (at most 7 characters below 1000 T). Negative or NaN input reads as 0.
[[nodiscard]] std::string format_count(double count);

/// A duration in ns with an adaptive unit and three significant digits: "881ns", "27.1us",
/// "393us", "3.97ms", "7.31s", "1234s" (at most 6 characters below 100000 s).
[[nodiscard]] std::string format_ns(double ns);
/// As above, for an integer number of ns (histogram percentiles, min and max).
[[nodiscard]] std::string format_ns(std::uint64_t ns);

/// A percentage with two decimals: "12.34%"; "-" when absent (no reference to compare with).
[[nodiscard]] std::string format_pct(std::optional<double> pct);

}  // namespace volley::report
