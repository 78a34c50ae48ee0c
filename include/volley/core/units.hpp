#pragma once
// Sizes, counts, times and rates as users write them ("64k", "1.5m", "30s", "10k/s"), parsed into
// typed values without exceptions. Each parse returns the value, or an error message that quotes
// the input; some inputs parse with a warning (uperf's `30m`, read as milliseconds). Messages are
// phrases meant to follow "option 'size': " or "--interval: ". Pure functions, any thread.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace volley::core {

/// The result of parse_size() and parse_count(): `value` is set exactly when `error` is empty.
struct SizeParse {
  std::optional<std::uint64_t> value;
  std::string error;
  std::string warning;
};
using CountParse = SizeParse;

/// The result of parse_duration(): `value` is set exactly when `error` is empty.
struct DurationParse {
  std::optional<std::chrono::nanoseconds> value;
  std::string error;
  std::string warning;  ///< set for a lone `m` (read as milliseconds, as uperf does)
};

/// The result of parse_rate(): `value` (per second) is set exactly when `error` is empty.
struct RateParse {
  std::optional<double> value;
  std::string error;
  std::string warning;
};

/// Bytes: an integer or decimal with an optional suffix b, k, m, g or t (powers of 1024),
/// case-insensitive: "64", "8k", "1.5M", "3g". Errors: empty, negative, unknown suffix, a
/// fraction that is not a whole number of bytes, more than 2^64-1. Zero is accepted.
SizeParse parse_size(std::string_view text);

/// A count: the same grammar as parse_size() ("1k" = 1024), with "count" in messages.
CountParse parse_count(std::string_view text);

/// Which units a time may have. kVolley (the command line): ns, us, ms, s, min, h. kUperf
/// (profiles, so uperf's profiles keep their meaning): ns, us, ms, s and h, and otherwise uperf's
/// rule that only the unit's first letter counts (s, m = ms, u, n), with a warning, so `1min` is
/// 1 ms and `10sec` is 10 s.
enum class DurationSyntax { kVolley, kUperf };

/// A time: a number (decimals allowed) with a unit (see DurationSyntax), case-insensitive; a bare
/// number is seconds. A lone `m` means milliseconds, with a warning suggesting `ms` or `min`.
/// Errors: empty, negative, unknown unit, more than kMaxDuration (365 days). Zero is accepted.
DurationParse parse_duration(std::string_view text,
                             DurationSyntax syntax = DurationSyntax::kVolley);

/// A rate per second: a positive-or-zero number with an optional size suffix (k = 1024, as in
/// uperf) and an optional "/s": "100", "1.5k", "10k/s".
RateParse parse_rate(std::string_view text);

/// "65536 (64k)" for exact multiples of 1024 above 1023, else "100": the exact figure first.
std::string format_bytes(std::uint64_t bytes);

/// The largest unit that represents `d` exactly: "10s", "1500ms", "2min", "1h", "0s".
std::string format_duration(std::chrono::nanoseconds d);

}  // namespace volley::core
