#include "volley/profile/duration_cap.hpp"

#include <variant>

namespace volley::profile {

std::size_t cap_durations(Profile& profile, Nanoseconds cap) {
  std::size_t shortened = 0;
  for (Group& g : profile.groups) {
    for (Transaction& t : g.transactions) {
      auto* d = std::get_if<Duration>(&t.bound);
      if (d == nullptr || d->length <= cap) continue;
      d->length = cap;
      ++shortened;
    }
  }
  return shortened;
}

}  // namespace volley::profile
