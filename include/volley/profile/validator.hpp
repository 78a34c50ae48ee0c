#pragma once
// Cross-element rules that a single element cannot check on its own: a read on a connection no
// earlier flowop opened, a disconnect of an unknown connection, nthreads >= 1, and so on.
#include "volley/core/diagnostic.hpp"
#include "volley/profile/model.hpp"

namespace volley::profile {

/// Appends every cross-element problem in `profile` to the result.
core::Diagnostics validate(const Profile& profile);

}  // namespace volley::profile
