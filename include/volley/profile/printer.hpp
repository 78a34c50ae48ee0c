#pragma once
// A readable rendering of a resolved profile, for `volley dump`.
#include <string>

#include "volley/profile/model.hpp"

namespace volley::profile {

/// One line per group, transaction and flowop, indented, with every option resolved and units
/// shown (sizes in bytes with a k/m/g form, times in the largest exact unit).
std::string to_text(const Profile& profile);

}  // namespace volley::profile
