#include "volley/cli/option_types.hpp"

#include <charconv>
#include <iostream>

#include <fmt/format.h>

#include "volley/core/units.hpp"

namespace volley::cli {

CLI::Validator unsigned_in(std::uint64_t lo, std::uint64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (text.empty() || ec != std::errc{} || ptr != end || value < lo || value > hi) {
          return fmt::format("'{}' is not a whole number in {}..{}", text, lo, hi);
        }
        return {};
      },
      fmt::format("{}..{}", lo, hi));
}

namespace {

/// core::format_duration, but whole minutes as such ("5min"): on the command line `min` is
/// minutes (only profiles read it as uperf does).
std::string readable(std::chrono::nanoseconds d) {
  const auto minutes = std::chrono::duration_cast<std::chrono::minutes>(d);
  if (minutes.count() > 0 && minutes == d &&
      d % std::chrono::hours(1) != std::chrono::nanoseconds{0}) {
    return fmt::format("{}min", minutes.count());
  }
  return core::format_duration(d);
}

}  // namespace

CLI::Validator duration_in(const DurationRange& range) {
  return CLI::Validator(
      [range](std::string& text) -> std::string {
        const core::DurationParse parsed = core::parse_duration(text);
        if (!parsed.value) return parsed.error;
        if (*parsed.value < range.min) {
          if (!range.why_min.empty())
            return fmt::format("'{}' is too short: {}", text, range.why_min);
          if (range.min.count() == 1) return fmt::format("'{}' must be longer than 0", text);
          return fmt::format("'{}' must be at least {}", text, readable(range.min));
        }
        if (*parsed.value > range.max) {
          return fmt::format("'{}' must be at most {}", text, readable(range.max));
        }
        return {};
      },
      "");
}

namespace {

/// The option's long name for messages ("--interval" of "-i,--interval").
std::string display_name(const std::string& names) {
  const std::size_t at = names.find("--");
  if (at == std::string::npos) return names;
  return names.substr(at, names.find(',', at) - at);
}

/// Reads a value duration_in() accepted, saying on stderr how an ambiguous one was read.
std::chrono::nanoseconds read_duration(const std::string& name, const std::string& text) {
  const core::DurationParse parsed = core::parse_duration(text);
  if (!parsed.warning.empty())
    std::cerr << "volley: warning: " << name << ": " << parsed.warning << "\n";
  return parsed.value.value_or(std::chrono::nanoseconds{0});
}

}  // namespace

CLI::Option* add_duration_option(CLI::App& cmd, const std::string& names,
                                 std::chrono::nanoseconds& into, const std::string& help,
                                 const DurationRange& range) {
  const std::string name = display_name(names);
  return cmd
      .add_option_function<std::string>(
          names, [&into, name](const std::string& text) { into = read_duration(name, text); }, help)
      ->check(duration_in(range))
      ->default_str(readable(into))
      ->type_name("DURATION");
}

CLI::Option* add_duration_option(CLI::App& cmd, const std::string& names,
                                 std::optional<std::chrono::nanoseconds>& into,
                                 const std::string& help, const DurationRange& range) {
  const std::string name = display_name(names);
  return cmd
      .add_option_function<std::string>(
          names, [&into, name](const std::string& text) { into = read_duration(name, text); }, help)
      ->check(duration_in(range))
      ->type_name("DURATION");
}

namespace {

/// "4096", "64k", "1g": the largest suffix that is exact.
std::string short_bytes(std::uint64_t bytes) {
  constexpr std::string_view kSuffix = "kmgt";
  std::size_t unit = 0;
  while (bytes >= 1024 && bytes % 1024 == 0 && unit < kSuffix.size()) {
    bytes /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{}", bytes) : fmt::format("{}{}", bytes, kSuffix[unit - 1]);
}

}  // namespace

CLI::Validator size_in(std::uint64_t lo, std::uint64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        const core::SizeParse parsed = core::parse_size(text);
        if (!parsed.value) return parsed.error;
        if (*parsed.value < lo || *parsed.value > hi) {
          return fmt::format("'{}' is not a size in {}..{} bytes", text, short_bytes(lo),
                             short_bytes(hi));
        }
        return {};
      },
      "");
}

CLI::Option* add_size_option(CLI::App& cmd, const std::string& names, std::uint64_t& into,
                             const std::string& help, std::uint64_t lo, std::uint64_t hi) {
  return cmd
      .add_option_function<std::string>(
          names,
          [&into](const std::string& text) { into = core::parse_size(text).value.value_or(0); },
          help)
      ->check(size_in(lo, hi))
      ->default_str(short_bytes(into))
      ->type_name("SIZE");
}

}  // namespace volley::cli
