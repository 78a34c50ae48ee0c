#pragma once
// Reads a profile file, resolves its variables (--set, then the environment) and parses it,
// printing every diagnostic to stderr in the file:line:column form.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "volley/profile/parser.hpp"

namespace volley::cli {

struct LoadedProfile {
  std::string path;
  std::string text;
  profile::ParseResult parsed;
};

/// Parses "name=value" items into bindings; a malformed item is an error sentence.
std::optional<std::map<std::string, std::string>> parse_bindings(
    const std::vector<std::string>& items, std::string& error);

/// The process environment as a map (the documented fallback for profile variables).
std::map<std::string, std::string> environment_map();

/// Loads and parses `path`; prints diagnostics (warnings too) to stderr. `profile` is set only
/// when there are no errors (with `strict`, no warnings either).
LoadedProfile load_profile(const std::string& path, const profile::Variables& variables,
                           bool strict);

}  // namespace volley::cli
