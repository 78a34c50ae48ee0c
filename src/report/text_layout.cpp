#include "text_layout.hpp"

#include <fmt/format.h>

#include "volley/report/units_format.hpp"

namespace volley::report::detail {

std::string labelled_row(std::string_view label, std::size_t width, std::string_view rest) {
  if (label.size() < width) return fmt::format("{:<{}}{}\n", label, width, rest);
  return fmt::format("{}\n{:<{}}{}\n", label, "", width, rest);
}

std::string fit_count(std::uint64_t n, std::size_t width) {
  std::string exact = fmt::format("{}", n);
  if (exact.size() < width) return exact;
  return format_count(static_cast<double>(n));
}

std::string rule(std::size_t width) { return std::string(width, '-') + "\n"; }

}  // namespace volley::report::detail
