#pragma once
/// \file
/// The `--vary NAME=LIST` argument of `volley sweep`: a comma list (`t=1,2,4`, any values), a
/// geometric range (`t=1..4096x2`: 1, 2, 4, ... up to 4096) or an arithmetic range
/// (`t=1..10+3`: 1, 4, 7, 10). Pure parsing; errors are sentences, never exceptions.
/// Thread: any.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace volley::analysis {

/// How the values were produced (a chart draws a geometric sweep on a log axis).
enum class ValueSpacing { kList, kGeometric, kArithmetic };

/// A parsed `--vary`.
struct VaryList {
  std::string name;                 ///< The profile variable, e.g. "t".
  std::vector<std::string> values;  ///< In sweep order, as bound to the variable.
  ValueSpacing spacing = ValueSpacing::kList;
};

/// A VaryList, or why the text is not one.
struct VaryParse {
  std::optional<VaryList> vary;
  std::string error;  ///< Set when `vary` is empty.
};

/// Most values one `--vary` may produce (a range typo must not start a week-long sweep).
inline constexpr std::size_t kMaxVaryValues = 1000;

/// Parses "NAME=LIST". Errors: no '=', empty or malformed name, empty item in a list, a range
/// whose bounds or step are not integers, a step that does not move toward the end (x1, +0),
/// start above end, or more than kMaxVaryValues values.
[[nodiscard]] VaryParse parse_vary(std::string_view text);

/// Whether every value reads fully as a finite number. Thread: any.
[[nodiscard]] bool all_numeric(const std::vector<std::string>& values);

/// `text` as a finite number, or nullopt (no trailing characters allowed).
[[nodiscard]] std::optional<double> to_number(std::string_view text);

}  // namespace volley::analysis
