#include "volley/core/units.hpp"

#include "volley/core/limits.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <utility>

namespace volley::core {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// A non-negative decimal number split into its integer part and its fraction, so that integer
/// inputs stay exact in 64 bits (a double would round 2^63-ish byte counts).
struct Number {
  std::uint64_t whole = 0;
  double fraction = 0.0;  ///< in [0, 1)
  bool overflow = false;
  std::string_view rest;  ///< what follows the number (the unit), leading spaces removed
};

/// Reads "[digits][.digits]" from the front of `s`; nullopt when no digit is there.
std::optional<Number> read_number(std::string_view s) {
  Number n;
  std::size_t i = 0;
  bool any_digit = false;
  for (; i < s.size() && is_digit(s[i]); ++i) {
    any_digit = true;
    const auto digit = static_cast<std::uint64_t>(s[i] - '0');
    if (__builtin_mul_overflow(n.whole, std::uint64_t{10}, &n.whole) ||
        __builtin_add_overflow(n.whole, digit, &n.whole)) {
      n.overflow = true;
    }
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    double scale = 0.1;
    for (; i < s.size() && is_digit(s[i]); ++i) {
      any_digit = true;
      n.fraction += static_cast<double>(s[i] - '0') * scale;
      scale /= 10.0;
    }
  }
  if (!any_digit) return std::nullopt;
  n.rest = trim(s.substr(i));
  return n;
}

/// whole * unit + fraction * unit, rounded to the nearest unit of 1; nullopt on overflow.
std::optional<std::uint64_t> scale(const Number& n, std::uint64_t unit) {
  if (n.overflow) return std::nullopt;
  std::uint64_t result = 0;
  if (__builtin_mul_overflow(n.whole, unit, &result)) return std::nullopt;
  const auto extra =
      static_cast<std::uint64_t>(std::llround(n.fraction * static_cast<double>(unit)));
  if (__builtin_add_overflow(result, extra, &result)) return std::nullopt;
  return result;
}

std::optional<std::uint64_t> size_multiplier(std::string_view suffix) {
  const std::string s = lower(suffix);
  if (s.empty() || s == "b") return 1;
  if (s == "k") return std::uint64_t{1} << 10U;
  if (s == "m") return std::uint64_t{1} << 20U;
  if (s == "g") return std::uint64_t{1} << 30U;
  if (s == "t") return std::uint64_t{1} << 40U;
  return std::nullopt;
}

SizeParse parse_bytes_like(std::string_view text, std::string_view what) {
  const std::string_view s = trim(text);
  if (s.empty()) return {std::nullopt, fmt::format("empty {}", what), {}};
  if (s.front() == '-') {
    return {std::nullopt, fmt::format("invalid {} '{}': must not be negative", what, s), {}};
  }
  const auto n = read_number(s.front() == '+' ? s.substr(1) : s);
  if (!n) return {std::nullopt, fmt::format("invalid {} '{}': expected a number", what, s), {}};
  const auto mult = size_multiplier(n->rest);
  if (!mult) {
    return {
        std::nullopt,
        fmt::format("invalid {} '{}': unknown suffix '{}' (use b, k, m, g or t)", what, s, n->rest),
        {}};
  }
  // 1.5k is 1536 bytes, but 1.3k is not a whole number: refuse rather than guess.
  const double exact = n->fraction * static_cast<double>(*mult);
  if (std::fabs(exact - std::round(exact)) > 1e-6) {
    return {std::nullopt, fmt::format("invalid {} '{}': not a whole number", what, s), {}};
  }
  const auto value = scale(*n, *mult);
  if (!value) {
    return {std::nullopt, fmt::format("{} '{}' is too large (the limit is 2^64-1)", what, s), {}};
  }
  return {value, {}, {}};
}

struct TimeUnit {
  std::string_view name;
  std::uint64_t nanoseconds;
};

constexpr std::array<TimeUnit, 6> kTimeUnits{{{"ns", 1},
                                              {"us", 1'000},
                                              {"ms", 1'000'000},
                                              {"s", 1'000'000'000},
                                              {"min", 60'000'000'000},
                                              {"h", 3'600'000'000'000}}};

}  // namespace

SizeParse parse_size(std::string_view text) { return parse_bytes_like(text, "size"); }

CountParse parse_count(std::string_view text) { return parse_bytes_like(text, "count"); }

DurationParse parse_duration(std::string_view text, DurationSyntax syntax) {
  const std::string_view s = trim(text);
  if (s.empty()) return {std::nullopt, "empty duration", {}};
  if (s.front() == '-') {
    return {std::nullopt, fmt::format("invalid duration '{}': must not be negative", s), {}};
  }
  const auto n = read_number(s.front() == '+' ? s.substr(1) : s);
  if (!n) return {std::nullopt, fmt::format("invalid duration '{}': expected a number", s), {}};
  const std::string unit = lower(n->rest);
  std::uint64_t unit_ns = 0;
  std::string warning;
  if (unit.empty()) {
    unit_ns = 1'000'000'000;  // uperf: a bare number is seconds
  } else if (unit == "m") {
    // uperf reads a lone m as milliseconds; keep that so its profiles mean the same, but say so.
    unit_ns = 1'000'000;
    warning = fmt::format("'{}' is read as milliseconds (as uperf does); write '{}ms' or '{}min'",
                          s, s.substr(0, s.size() - 1), s.substr(0, s.size() - 1));
  } else {
    for (const auto& u : kTimeUnits) {
      if (unit == u.name && !(syntax == DurationSyntax::kUperf && u.name == "min")) {
        unit_ns = u.nanoseconds;
      }
    }
  }
  if (unit_ns == 0 && syntax == DurationSyntax::kUperf) {
    // uperf reads only the first letter of a unit: keep what its profiles mean, and say so.
    static constexpr std::array<std::pair<char, TimeUnit>, 4> kFirstLetter{
        {{'s', {"s", 1'000'000'000}},
         {'m', {"ms", 1'000'000}},
         {'u', {"us", 1'000}},
         {'n', {"ns", 1}}}};
    for (const auto& [letter, u] : kFirstLetter) {
      if (unit.front() != letter) continue;
      unit_ns = u.nanoseconds;
      const std::string_view number = s.substr(0, s.size() - n->rest.size());
      warning = fmt::format(
          "'{}' is read as {}{}, as uperf reads it (only the first letter of a "
          "unit counts); write '{}{}'{}",
          s, trim(number), u.name, trim(number), u.name,
          letter == 'm' ? " (or seconds for minutes)" : "");
    }
  }
  if (unit_ns == 0) {
    return {std::nullopt,
            fmt::format("invalid duration '{}': unknown unit '{}' (use ns, us, ms, s{}h)", s,
                        n->rest, syntax == DurationSyntax::kUperf ? " or " : ", min or "),
            {}};
  }
  const auto value = scale(*n, unit_ns);
  using Rep = std::chrono::nanoseconds::rep;
  if (!value || *value > static_cast<std::uint64_t>(kMaxDuration.count())) {
    return {std::nullopt,
            fmt::format("duration '{}' is too long: the most is {} (365 days)", s,
                        format_duration(kMaxDuration)),
            {}};
  }
  static_assert(kMaxDuration.count() < std::numeric_limits<Rep>::max() / 2);
  return {std::chrono::nanoseconds(static_cast<Rep>(*value)), {}, std::move(warning)};
}

RateParse parse_rate(std::string_view text) {
  std::string_view s = trim(text);
  if (s.size() >= 2 && s.substr(s.size() - 2) == "/s") s = trim(s.substr(0, s.size() - 2));
  if (s.empty()) return {std::nullopt, "empty rate", {}};
  if (s.front() == '-') {
    return {std::nullopt, fmt::format("invalid rate '{}': must not be negative", s), {}};
  }
  const auto n = read_number(s.front() == '+' ? s.substr(1) : s);
  if (!n) return {std::nullopt, fmt::format("invalid rate '{}': expected a number", s), {}};
  const auto mult = size_multiplier(n->rest);
  if (!mult) {
    return {std::nullopt,
            fmt::format("invalid rate '{}': unknown suffix '{}' (use k, m, g or t)", s, n->rest),
            {}};
  }
  if (n->overflow) return {std::nullopt, fmt::format("rate '{}' is too large", s), {}};
  const double value = (static_cast<double>(n->whole) + n->fraction) * static_cast<double>(*mult);
  return {value, {}, {}};
}

std::string format_bytes(std::uint64_t bytes) {
  constexpr std::array<char, 4> kSuffix{'k', 'm', 'g', 't'};
  if (bytes < 1024 || bytes % 1024 != 0) return fmt::format("{}", bytes);
  std::uint64_t v = bytes;
  std::size_t unit = 0;
  v /= 1024;
  while (unit + 1 < kSuffix.size() && v % 1024 == 0) {
    v /= 1024;
    ++unit;
  }
  return fmt::format("{} ({}{})", bytes, v, kSuffix[unit]);
}

std::string format_duration(std::chrono::nanoseconds d) {
  const auto ns = d.count();
  if (ns == 0) return "0s";
  // Largest unit first; the first one that divides exactly wins. Never `min`: profiles read
  // it as uperf does (milliseconds), so a printed profile would change meaning.
  for (auto it = kTimeUnits.rbegin(); it != kTimeUnits.rend(); ++it) {
    if (it->name == "min") continue;
    const auto unit = static_cast<std::chrono::nanoseconds::rep>(it->nanoseconds);
    if (ns % unit == 0) return fmt::format("{}{}", ns / unit, it->name);
  }
  return fmt::format("{}ns", ns);
}

}  // namespace volley::core
