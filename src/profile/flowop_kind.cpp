#include "flowop_kind.hpp"

#include <algorithm>
#include <array>

namespace volley::profile::detail {
namespace {

constexpr std::size_t kWritten =
    static_cast<std::size_t>(std::count_if(kFlowopTraits.begin(), kFlowopTraits.end(),
                                           [](const FlowopTraits& row) { return row.written; }));

constexpr std::array<std::string_view, kWritten> kNames = [] {
  std::array<std::string_view, kWritten> names{};
  std::size_t n = 0;
  for (const FlowopTraits& row : kFlowopTraits) {
    if (row.written) names[n++] = row.name;
  }
  return names;
}();

}  // namespace

std::optional<FlowopKind> flowop_kind(std::string_view lower_name) {
  for (const FlowopTraits& row : kFlowopTraits) {
    if (row.written && row.name == lower_name) return row.kind;
  }
  return std::nullopt;
}

std::span<const std::string_view> flowop_names() { return kNames; }

}  // namespace volley::profile::detail
