#pragma once
// Values for `$name` / `${name}` in a profile. Explicit bindings (--set) win; the environment
// snapshot is the documented fallback (uperf reads only the environment). The CLI layer fills
// `environment`; nothing below cli/ calls getenv.
#include <map>
#include <optional>
#include <string>

namespace volley::profile {

struct Variables {
  std::map<std::string, std::string> bindings;     ///< from --set name=value
  std::map<std::string, std::string> environment;  ///< the process environment, as given

  /// The value of `name`: bindings first, then the environment; in each, the lower-cased name
  /// first (uperf's rule: it lower-cases the profile, so `$H` reads `h`), then the exact name.
  [[nodiscard]] std::optional<std::string> lookup(const std::string& name) const;
};

}  // namespace volley::profile
