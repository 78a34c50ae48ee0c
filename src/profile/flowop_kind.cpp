#include "flowop_kind.hpp"

#include <array>

namespace volley::profile::detail {
namespace {

// Indexed by FlowopKind.
constexpr std::array<std::string_view, 11> kNames{"connect",   "accept", "disconnect", "write",
                                                  "send",      "read",   "recv",       "sendfile",
                                                  "sendfilev", "think",  "nop"};

}  // namespace

std::optional<FlowopKind> flowop_kind(std::string_view lower_name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == lower_name) return static_cast<FlowopKind>(i);
  }
  return std::nullopt;
}

std::span<const std::string_view> flowop_names() { return kNames; }

std::string_view name_of(FlowopKind kind) { return kNames[static_cast<std::size_t>(kind)]; }

}  // namespace volley::profile::detail
