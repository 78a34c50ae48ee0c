#include "text_layout.hpp"

#include <fmt/format.h>

namespace volley::report::detail {

std::string labelled_row(std::string_view label, std::size_t width, std::string_view rest) {
  if (label.size() < width) return fmt::format("{:<{}}{}\n", label, width, rest);
  return fmt::format("{}\n{:<{}}{}\n", label, "", width, rest);
}

std::string rule(std::size_t width) { return std::string(width, '-') + "\n"; }

}  // namespace volley::report::detail
