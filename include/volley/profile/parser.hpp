#pragma once
// Reads a profile (XML text) into the typed model, reporting every problem at once with its
// location. parse_profile() also runs validate(): a profile that comes back is ready to run.
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "volley/core/diagnostic.hpp"
#include "volley/profile/model.hpp"
#include "volley/profile/variables.hpp"

namespace volley::profile {

struct ParseResult {
  std::optional<Profile> profile;  ///< set when diagnostics has no errors
  core::Diagnostics diagnostics;   ///< errors and warnings, in file order
  /// Every variable the profile referenced, with the value used. The master sends exactly this
  /// map to slaves so they resolve the same profile text the same way.
  std::map<std::string, std::string> used_variables;
};

/// Parses `text` read from `filename` (used in locations only). Never throws on bad input.
ParseResult parse_profile(std::string_view text, const std::string& filename,
                          const Variables& variables);

}  // namespace volley::profile
