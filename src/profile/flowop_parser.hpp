#pragma once
// Internal: one <flowop> from its type and its (expanded) options string to a typed Flowop.
#include <cstddef>
#include <optional>

#include "expand.hpp"
#include "flowop_kind.hpp"
#include "parse_context.hpp"
#include "volley/profile/model.hpp"

namespace volley::profile::detail {

/// Reads `options` (nullptr when the element has none) for a flowop of `kind` whose element
/// starts at `element_offset`. Reports every problem through `ctx`; returns the flowop when none
/// of them is an error.
std::optional<Flowop> parse_flowop(ParseContext& ctx, FlowopKind kind, std::size_t element_offset,
                                   const Expansion* options);

}  // namespace volley::profile::detail
