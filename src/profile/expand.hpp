#pragma once
// Internal: `$name` / `${name}` substitution in attribute values, keeping source offsets.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "located_text.hpp"
#include "volley/profile/variables.hpp"

namespace volley::profile::detail {

/// Where `$name` (without braces) is recognised. `${name}` is recognised anywhere in both.
enum class ExpandMode {
  kWholeValue,  ///< only when `$name` is the entire value (attributes such as nthreads="$t")
  kOptions,     ///< also as a whole option token or a whole option value (size=$s, "$opts")
};

struct ExpandProblem {
  std::size_t offset = 0;  ///< file offset of the `$`
  std::string message;
};

struct Expansion {
  LocatedText text;  ///< every substituted character maps to its variable's `$`
  std::vector<ExpandProblem> problems;
  /// Positions in `text` where a variable could not be substituted (nothing was inserted there):
  /// the parser skips whatever contains them instead of reporting follow-on errors.
  std::vector<std::size_t> holes;
};

/// Expands `in`, recording every variable it resolves in `used`.
Expansion expand_variables(const LocatedText& in, ExpandMode mode, const Variables& variables,
                           std::map<std::string, std::string>& used);

}  // namespace volley::profile::detail
