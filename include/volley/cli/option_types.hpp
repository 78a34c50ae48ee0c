#pragma once
// The one place where the command line's numbers are read and checked: counts, durations and
// sizes, each a CLI11 option or validator built over the parsers of core/units.hpp. A bad value
// is refused while parsing, by CLI11, with the option's name and the reason ("--interval:
// '50ms' is too short: ..."), before any command runs; the commands receive typed values.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "volley/core/limits.hpp"

namespace volley::cli {

/// A CLI11 check: a plain unsigned integer in [lo, hi] (no sign, so "-1" never wraps around).
CLI::Validator unsigned_in(std::uint64_t lo, std::uint64_t hi);

/// The durations an option accepts, and why not a shorter one ("" for the plain "must be at
/// least MIN"; "must be longer than 0" when `min` is 1 ns).
struct DurationRange {
  std::chrono::nanoseconds min{1};
  std::chrono::nanoseconds max = core::kMaxDuration;
  std::string why_min;
};

/// A CLI11 check: a duration as core::parse_duration reads it (ns, us, ms, s, min, h; a bare
/// number is seconds), within `range`.
CLI::Validator duration_in(const DurationRange& range);

/// Declares a duration option that fills `into` (its default is shown in --help). A lone `m`
/// (read as milliseconds) is accepted with a warning on stderr, as in a profile.
CLI::Option* add_duration_option(CLI::App& cmd, const std::string& names,
                                 std::chrono::nanoseconds& into, const std::string& help,
                                 const DurationRange& range = {});
/// The same, for an option with no default (unset: nullopt).
CLI::Option* add_duration_option(CLI::App& cmd, const std::string& names,
                                 std::optional<std::chrono::nanoseconds>& into,
                                 const std::string& help, const DurationRange& range = {});

/// A CLI11 check: a size in bytes as core::parse_size reads it ("4096", "64k", "16m"), in
/// [lo, hi].
CLI::Validator size_in(std::uint64_t lo, std::uint64_t hi);

/// Declares a size option (bytes) that fills `into`, in [lo, hi]; its default is shown in --help.
CLI::Option* add_size_option(CLI::App& cmd, const std::string& names, std::uint64_t& into,
                             const std::string& help, std::uint64_t lo, std::uint64_t hi);

}  // namespace volley::cli
