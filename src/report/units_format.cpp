#include "volley/report/units_format.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string_view>

namespace volley::report {
namespace {

/// NaN and negative values read as 0 (a rate can never be either).
double sanitize(double v) { return (std::isnan(v) || v < 0) ? 0.0 : v; }

/// `v` scaled down by `base` until below it (or out of prefixes), with that prefix.
struct Scaled {
  double value = 0;
  std::string_view prefix;
};

Scaled scale(double v, double base, std::string_view unit_prefixes) {
  std::size_t i = 0;
  while (v >= base && i + 1 < unit_prefixes.size()) {
    v /= base;
    ++i;
  }
  return {v, unit_prefixes.substr(i, 1)};
}

/// Three significant digits: 1.23, 12.3, 123, 1234.
std::string three_digits(double v) {
  if (v < 9.995) return fmt::format("{:.2f}", v);
  if (v < 99.95) return fmt::format("{:.1f}", v);
  return fmt::format("{:.0f}", v);
}

}  // namespace

std::string format_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{}B", bytes);
  const Scaled s = scale(static_cast<double>(bytes), 1024.0, " KMGTPE");
  return fmt::format("{:.2f}{}B", s.value, s.prefix);
}

std::string format_bits_per_s(double bits_per_s) {
  const double v = sanitize(bits_per_s);
  if (v == 0) return "0b/s";
  const Scaled s = scale(v, 1000.0, " KMGTPE");
  if (s.prefix == " ") return fmt::format("{:.2f}b/s", s.value);
  return fmt::format("{:.2f}{}b/s", s.value, s.prefix);
}

std::string format_count(double count) {
  const double v = sanitize(count);
  if (v == 0) return "0";
  const Scaled s = scale(v, 1000.0, " kMGTPE");
  if (s.prefix == " ") return fmt::format("{:.2f}", s.value);
  return fmt::format("{:.2f}{}", s.value, s.prefix);
}

std::string format_ns(double ns) {
  const double v = sanitize(ns);
  if (v < 999.5) return fmt::format("{:.0f}ns", v);
  constexpr std::array<std::string_view, 3> kUnits = {"us", "ms", "s"};
  double scaled = v / 1000.0;
  std::size_t i = 0;
  // Move up while the value would print as 1000 or more in this unit.
  while (scaled >= 999.5 && i + 1 < kUnits.size()) {
    scaled /= 1000.0;
    ++i;
  }
  return three_digits(scaled) + std::string(kUnits[i]);
}

std::string format_ns(std::uint64_t ns) { return format_ns(static_cast<double>(ns)); }

std::string format_pct(std::optional<double> pct) {
  if (!pct) return "-";
  return fmt::format("{:.2f}%", *pct);
}

}  // namespace volley::report
