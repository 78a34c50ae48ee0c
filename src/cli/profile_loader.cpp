#include "volley/cli/profile_loader.hpp"

#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "volley/core/source_map.hpp"

extern char** environ;  // POSIX; read only here, in cli/

namespace volley::cli {

std::optional<std::map<std::string, std::string>> parse_bindings(
    const std::vector<std::string>& items, std::string& error) {
  std::map<std::string, std::string> out;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      error = fmt::format("--set '{}': expected NAME=VALUE, e.g. --set h=192.0.2.1", item);
      return std::nullopt;
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

std::map<std::string, std::string> environment_map() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string item(*e);
    const auto eq = item.find('=');
    if (eq != std::string::npos) env.emplace(item.substr(0, eq), item.substr(eq + 1));
  }
  return env;
}

LoadedProfile load_profile(const std::string& path, const profile::Variables& variables,
                           bool strict) {
  LoadedProfile loaded{path, {}, {}};
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    loaded.parsed.diagnostics.error({path, 0, 0},
                                    "cannot open profile: no such file or not readable");
    std::cerr << loaded.parsed.diagnostics.format(nullptr);
    return loaded;
  }
  std::ostringstream text;
  text << in.rdbuf();
  loaded.text = text.str();
  loaded.parsed = profile::parse_profile(loaded.text, path, variables);
  if (strict && loaded.parsed.diagnostics.warning_count() > 0) {
    loaded.parsed.diagnostics.promote_warnings();
    loaded.parsed.profile.reset();
  }
  core::SourceMap sources;
  sources.add(path, loaded.text);
  std::cerr << loaded.parsed.diagnostics.format(&sources);
  return loaded;
}

}  // namespace volley::cli
