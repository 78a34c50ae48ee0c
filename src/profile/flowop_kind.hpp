#pragma once
// Internal: the flowop kinds a profile may write, by name (the rows are in
// volley/profile/flowop_traits.hpp).
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "volley/profile/flowop_traits.hpp"

namespace volley::profile::detail {

/// A set of kinds, for "which flowops an option applies to".
using KindMask = std::uint32_t;
static_assert(kFlowopKinds <= 32, "KindMask has a bit per kind");
constexpr KindMask bit(FlowopKind k) { return KindMask{1} << static_cast<unsigned>(k); }

/// The kind a profile writes as `lower_name` (already lower-cased), or nullopt.
std::optional<FlowopKind> flowop_kind(std::string_view lower_name);
/// Every flowop type name a profile may write, in kind order, for suggestions.
std::span<const std::string_view> flowop_names();
/// The name of `kind` as the profile writes it.
constexpr std::string_view name_of(FlowopKind kind) { return traits(kind).name; }

}  // namespace volley::profile::detail
