#include "volley/profile/variables.hpp"

#include <cctype>

namespace volley::profile {

std::optional<std::string> Variables::lookup(const std::string& name) const {
  // uperf lower-cases its whole profile before it reads it, so `$H` and `$h` both read the
  // environment variable `h` (never `H`). --set names follow the same rule.
  std::string lowered = name;
  for (auto& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto* map : {&bindings, &environment}) {
    if (auto it = map->find(lowered); it != map->end()) return it->second;
    // volley also takes the exact name (`$HOST` with HOST set), which uperf never reads.
    if (auto it = map->find(name); it != map->end()) return it->second;
  }
  return std::nullopt;
}

}  // namespace volley::profile
