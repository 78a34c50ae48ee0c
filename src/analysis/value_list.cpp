#include "volley/analysis/value_list.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

namespace volley::analysis {
namespace {

/// A whole number with nothing around it, or nullopt.
std::optional<std::int64_t> to_integer(std::string_view text) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc{} || ptr != end) return std::nullopt;
  return v;
}

bool valid_name(std::string_view name) {
  if (name.empty()) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

VaryParse fail(std::string message) { return VaryParse{std::nullopt, std::move(message)}; }

/// "A..BxF" or "A..B+S", `list` being the text after "NAME=".
VaryParse parse_range(const std::string& name, std::string_view list) {
  const auto dots = list.find("..");
  const std::string_view start_text = list.substr(0, dots);
  std::string_view rest = list.substr(dots + 2);
  const auto op_at = rest.find_first_of("x+");
  if (op_at == std::string_view::npos) {
    return fail(
        fmt::format("--vary {}={}: a range needs a step: START..ENDxFACTOR (e.g. 1..64x2) "
                    "or START..END+STEP (e.g. 1..10+3)",
                    name, list));
  }
  const char op = rest[op_at];
  const auto start = to_integer(start_text);
  const auto end = to_integer(rest.substr(0, op_at));
  const auto step = to_integer(rest.substr(op_at + 1));
  if (!start || !end || !step) {
    return fail(
        fmt::format("--vary {}={}: range bounds and step must be whole numbers", name, list));
  }
  if (*start > *end) {
    return fail(fmt::format("--vary {}={}: the start ({}) is above the end ({})", name, list,
                            *start, *end));
  }
  VaryList out{name, {}, op == 'x' ? ValueSpacing::kGeometric : ValueSpacing::kArithmetic};
  if (op == 'x') {
    if (*step < 2)
      return fail(fmt::format("--vary {}={}: the factor must be 2 or more", name, list));
    if (*start < 1) {
      return fail(
          fmt::format("--vary {}={}: a geometric range must start at 1 or more", name, list));
    }
  } else if (*step < 1) {
    return fail(fmt::format("--vary {}={}: the step must be 1 or more", name, list));
  }
  for (std::int64_t v = *start; v <= *end;) {
    if (out.values.size() == kMaxVaryValues) {
      return fail(fmt::format("--vary {}={}: more than {} values", name, list, kMaxVaryValues));
    }
    out.values.push_back(std::to_string(v));
    // Stop before overflowing: the next value would pass the end anyway.
    if (op == 'x' ? v > *end / *step : v > *end - *step) break;
    v = op == 'x' ? v * *step : v + *step;
  }
  return VaryParse{std::move(out), {}};
}

}  // namespace

std::optional<double> to_number(std::string_view text) {
  double v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc{} || ptr != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

bool all_numeric(const std::vector<std::string>& values) {
  for (const auto& v : values) {
    if (!to_number(v)) return false;
  }
  return !values.empty();
}

VaryParse parse_vary(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos) {
    return fail(fmt::format("--vary '{}': expected NAME=LIST, e.g. t=1,2,4 or t=1..64x2", text));
  }
  const std::string name(text.substr(0, eq));
  if (!valid_name(name)) {
    return fail(fmt::format("--vary '{}': '{}' is not a variable name", text, name));
  }
  const std::string_view list = text.substr(eq + 1);
  if (list.empty()) return fail(fmt::format("--vary {}=: no values", name));
  if (list.find("..") != std::string_view::npos) return parse_range(name, list);
  VaryList out{name, {}, ValueSpacing::kList};
  std::size_t from = 0;
  while (true) {
    const auto comma = list.find(',', from);
    const std::string_view item =
        list.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from);
    if (item.empty()) {
      return fail(fmt::format("--vary {}={}: empty value in the list", name, list));
    }
    if (out.values.size() == kMaxVaryValues) {
      return fail(fmt::format("--vary {}={}: more than {} values", name, list, kMaxVaryValues));
    }
    out.values.emplace_back(item);
    if (comma == std::string_view::npos) break;
    from = comma + 1;
  }
  return VaryParse{std::move(out), {}};
}

}  // namespace volley::analysis
