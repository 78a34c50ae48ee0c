#pragma once
// Small layout helpers shared by the text reports (private to src/report).
#include <cstdint>
#include <string>
#include <string_view>

namespace volley::report::detail {

/// A row that starts with `label` left-aligned in `width` columns followed by `rest`. A label
/// that does not fit with at least one blank after it goes on a line of its own, and the row
/// follows with a blank label, so no name is ever cut and columns never touch.
std::string labelled_row(std::string_view label, std::size_t width, std::string_view rest);

/// `n` exactly when it fits in `width` columns with a blank before it, else with a 1000-based
/// prefix ("987.65M"), so a huge count never runs into the column on its left.
std::string fit_count(std::uint64_t n, std::size_t width);

/// A rule of `width` dashes and a line end.
std::string rule(std::size_t width = 79);

}  // namespace volley::report::detail
