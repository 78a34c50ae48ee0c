#include "volley/core/wall_time.hpp"

#include <cctype>

#include <fmt/format.h>

namespace volley::core {
namespace {

/// Reads exactly `n` digits at `pos` (advancing it); nullopt when they are not all digits.
std::optional<int> digits(std::string_view s, std::size_t& pos, std::size_t n) {
  if (pos + n > s.size()) return std::nullopt;
  int v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = s[pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  pos += n;
  return v;
}

bool expect(std::string_view s, std::size_t& pos, std::string_view chars) {
  if (pos >= s.size() || chars.find(s[pos]) == std::string_view::npos) return false;
  ++pos;
  return true;
}

/// ".123456789..." at `pos`: nanoseconds (digits past the ninth are dropped); nullopt when a
/// dot is not followed by a digit.
std::optional<std::int64_t> fraction_ns(std::string_view s, std::size_t& pos) {
  if (pos >= s.size() || s[pos] != '.') return 0;
  ++pos;
  const std::size_t first = pos;
  std::int64_t ns = 0;
  std::int64_t scale = 100'000'000;
  while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])) != 0) {
    ns += (s[pos] - '0') * scale;
    scale /= 10;
    ++pos;
  }
  if (pos == first) return std::nullopt;
  return ns;
}

WallTimeParse unix_seconds(std::string_view text) {
  std::size_t pos = 0;
  std::int64_t seconds = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])) != 0) {
    if (seconds > 9'000'000'000LL) return {std::nullopt, "Unix seconds out of range"};
    seconds = seconds * 10 + (text[pos] - '0');
    ++pos;
  }
  const auto frac = fraction_ns(text, pos);
  if (pos == 0 || !frac || pos != text.size()) {
    return {std::nullopt, fmt::format("'{}' is neither RFC 3339 (2026-11-23T12:00:00Z) nor Unix "
                                      "seconds (1795000000.5)",
                                      text)};
  }
  return {seconds * 1'000'000'000LL + *frac, {}};
}

}  // namespace

WallTimeParse parse_wall_time(std::string_view text) {
  if (text.size() < 11 || text[4] != '-') return unix_seconds(text);
  const auto bad = [&](std::string_view why) {
    return WallTimeParse{std::nullopt, fmt::format("'{}' is not an RFC 3339 time: {}", text, why)};
  };
  std::size_t pos = 0;
  const auto year = digits(text, pos, 4);
  const bool dash1 = expect(text, pos, "-");
  const auto month = digits(text, pos, 2);
  const bool dash2 = expect(text, pos, "-");
  const auto day = digits(text, pos, 2);
  if (!year || !dash1 || !month || !dash2 || !day) return bad("expected YYYY-MM-DD");
  if (!expect(text, pos, "Tt ")) return bad("expected 'T' between the date and the time");
  const auto hour = digits(text, pos, 2);
  const bool colon1 = expect(text, pos, ":");
  const auto minute = digits(text, pos, 2);
  const bool colon2 = expect(text, pos, ":");
  const auto second = digits(text, pos, 2);
  if (!hour || !colon1 || !minute || !colon2 || !second) return bad("expected HH:MM:SS");
  const auto frac = fraction_ns(text, pos);
  if (!frac) return bad("expected digits after '.'");
  int offset_minutes = 0;
  const bool zulu = expect(text, pos, "Zz");
  if (!zulu && pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    const auto oh = digits(text, pos, 2);
    const bool colon = expect(text, pos, ":");
    const auto om = digits(text, pos, 2);
    if (!oh || !colon || !om || *oh > 23 || *om > 59) return bad("expected an offset +HH:MM");
    offset_minutes = sign * (*oh * 60 + *om);
  } else if (!zulu) {
    return bad("expected a time zone: 'Z' or an offset such as +02:00");
  }
  if (pos != text.size()) return bad("unexpected text after the time zone");

  using namespace std::chrono;
  const year_month_day ymd{std::chrono::year{*year},
                           std::chrono::month{static_cast<unsigned>(*month)},
                           std::chrono::day{static_cast<unsigned>(*day)}};
  if (!ymd.ok()) return bad("no such date");
  if (*hour > 23 || *minute > 59) return bad("no such time of day");
  if (*second > 59) return bad("seconds must be 00..59 (leap seconds are not supported)");
  const sys_days date{ymd};
  const auto local = date + hours{*hour} + minutes{*minute} + seconds{*second};
  const auto utc = local - minutes{offset_minutes};
  return {duration_cast<nanoseconds>(utc.time_since_epoch()).count() + *frac, {}};
}

std::string check_start_time(std::int64_t at_ns, std::int64_t now_ns) {
  const double ahead_s = static_cast<double>(at_ns - now_ns) / 1e9;
  if (at_ns <= now_ns) {
    return fmt::format(
        "it is {:.3f} s in the past (the clock here says so: check that the hosts' "
        "clocks agree, e.g. with chrony)",
        -ahead_s);
  }
  if (at_ns - now_ns > std::chrono::nanoseconds(kMaxStartAhead).count()) {
    return fmt::format("it is {:.0f} s ahead; at most {} h is allowed", ahead_s,
                       kMaxStartAhead.count());
  }
  return {};
}

std::int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace volley::core
