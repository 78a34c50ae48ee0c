#include "volley/profile/variables.hpp"

#include <cctype>

namespace volley::profile {

std::optional<std::string> Variables::lookup(const std::string& name) const {
  if (auto it = bindings.find(name); it != bindings.end()) return it->second;
  if (auto it = environment.find(name); it != environment.end()) return it->second;
  // uperf's convention: the environment variable whose lower-cased name is `name` (H for $h).
  // The map is ordered, so when several qualify the choice is still deterministic.
  for (const auto& [key, value] : environment) {
    if (key.size() != name.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < key.size() && same; ++i) {
      same =
          std::tolower(static_cast<unsigned char>(key[i])) == static_cast<unsigned char>(name[i]);
    }
    if (same) return value;
  }
  return std::nullopt;
}

}  // namespace volley::profile
