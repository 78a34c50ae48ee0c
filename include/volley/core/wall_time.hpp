#pragma once
// Wall-clock instants on the command line (`volley run --start-at TIME`): RFC 3339 or Unix
// seconds, parsed to nanoseconds since the Unix epoch. Errors are sentences, never exceptions.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace volley::core {

struct WallTimeParse {
  std::optional<std::int64_t> unix_ns;  ///< set when the text was a valid time
  std::string error;                    ///< why not, otherwise
};

/// Parses an RFC 3339 date-time ("2026-11-23T12:00:00Z", "2026-11-23T14:00:00.250+02:00"; `t`,
/// `z` and a space instead of `T` are accepted) or Unix seconds with an optional fraction
/// ("1795000000", "1795000000.25"). Fractions beyond nanoseconds are truncated. Leap seconds
/// (:60) are refused: no clock volley reads can show them.
[[nodiscard]] WallTimeParse parse_wall_time(std::string_view text);

/// The furthest ahead a start time may be.
inline constexpr std::chrono::hours kMaxStartAhead{24};

/// Why `at_ns` cannot be a start time seen at `now_ns` (in the past, or more than
/// kMaxStartAhead ahead); empty when it can.
[[nodiscard]] std::string check_start_time(std::int64_t at_ns, std::int64_t now_ns);

/// The system clock, ns since the Unix epoch.
[[nodiscard]] std::int64_t unix_now_ns();

}  // namespace volley::core
