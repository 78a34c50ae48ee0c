#pragma once
// "Did you mean" for names the user mistyped: flowops, options and elements in a profile, and
// options and commands on the command line. Pure functions, any thread.
#include <span>
#include <string>
#include <string_view>

namespace volley::core {

/// Edit distance with adjacent transpositions counted as one edit ("wirte" -> "write" is 1),
/// case-insensitive.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` if it is close enough to be a likely typo, else "".
std::string closest(std::string_view word, std::span<const std::string_view> candidates);

/// "; did you mean 'X'?" for the closest candidate, or "" when none is close.
std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace volley::core
