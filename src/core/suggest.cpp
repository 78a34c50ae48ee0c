#include "volley/core/suggest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <vector>

namespace volley::core {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  auto low = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  // Three rows of the optimal-string-alignment table.
  std::vector<std::size_t> prev2(m + 1);
  std::vector<std::size_t> prev(m + 1);
  std::vector<std::size_t> cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = low(a[i - 1]) == low(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && low(a[i - 1]) == low(b[j - 2]) && low(a[i - 2]) == low(b[j - 1])) {
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
      }
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

std::string closest(std::string_view word, std::span<const std::string_view> candidates) {
  // A third of the word's length, at least 1 and at most 3 edits: close enough to be a typo,
  // far enough that "foo" does not suggest "nop".
  const std::size_t limit = std::clamp<std::size_t>(word.size() / 3, 1, 3);
  // Nothing within 3 edits of a short name is long; skipping long words also keeps a huge
  // garbage value from costing a quadratic comparison.
  constexpr std::size_t kLongest = 64;
  if (word.size() > kLongest) return {};
  std::string_view best;
  std::size_t best_distance = limit + 1;
  for (auto candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return std::string(best);
}

std::string did_you_mean(std::string_view word, std::span<const std::string_view> candidates) {
  const std::string best = closest(word, candidates);
  return best.empty() ? std::string() : fmt::format("; did you mean '{}'?", best);
}

}  // namespace volley::core
