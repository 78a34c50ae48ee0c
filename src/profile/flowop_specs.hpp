#pragma once
// Internal: the code each FlowopSpec alternative needs in the profile library, kept in one file
// (flowop_specs.cpp) next to its siblings: how it is built from the options read, what the slave
// runs for it, and how `volley dump` shows it. What is data about a kind is its row in
// volley/profile/flowop_traits.hpp.
#include <cstddef>
#include <optional>
#include <string>

#include "flowop_draft.hpp"
#include "parse_context.hpp"
#include "volley/profile/model.hpp"

namespace volley::profile::detail {

/// The spec of `draft.kind` from its options, or nullopt after reporting a missing or conflicting
/// option at `element_offset`. Only kinds a profile may write are built.
std::optional<FlowopSpec> build_spec(ParseContext& ctx, FlowopDraft& draft,
                                     std::size_t element_offset);

/// The slave's counterpart of a master's spec (see mirror()): the spec of the kind's `mirror`.
FlowopSpec mirror_spec(const FlowopSpec& spec);

/// The spec's options as `volley dump` shows them, each after a space ("" when it has none).
std::string spec_text(const FlowopSpec& spec);

}  // namespace volley::profile::detail
