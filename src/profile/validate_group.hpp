#pragma once
// Internal: the cross-element rules for one group, so that the parser can run them on the groups
// that parsed cleanly only.
#include "volley/core/diagnostic.hpp"
#include "volley/profile/model.hpp"

namespace volley::profile::detail {

/// Appends the problems of `group` to `out` (see validate()).
void validate_group(const Group& group, core::Diagnostics& out);

}  // namespace volley::profile::detail
