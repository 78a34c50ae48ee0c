#pragma once
/// \file
/// `volley run --max-duration T`: every `duration=` transaction longer than T runs for T instead,
/// so a profile written for minutes (uperf's VoIP and backup workloads: 120 s) can be tried, or
/// tested, in seconds without editing it. Iteration-bounded transactions are left alone.
#include <cstddef>

#include "volley/profile/model.hpp"

namespace volley::profile {

/// Shortens every duration bound above `cap` to `cap`; returns how many it shortened.
std::size_t cap_durations(Profile& profile, Nanoseconds cap);

}  // namespace volley::profile
