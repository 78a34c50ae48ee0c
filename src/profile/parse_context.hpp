#pragma once
// Internal: what every step of parse_profile() shares: the file text and its line index, the
// diagnostics so far, the variables and the record of which ones were used.
#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "volley/core/diagnostic.hpp"
#include "volley/core/source_map.hpp"
#include "volley/profile/model.hpp"
#include "volley/profile/variables.hpp"

namespace volley::profile::detail {

struct ParseContext {
  /// `source` is what is parsed; `original` the file as written, where locations point.
  /// `inserted` lists the offsets in `source` of characters the file does not have (ascending).
  ParseContext(std::string_view source, std::string file, const Variables& vars,
               std::string_view original, std::vector<std::size_t> inserted_chars = {})
      : text(source),
        filename(std::move(file)),
        index(original),
        variables(vars),
        inserted(std::move(inserted_chars)) {}
  ParseContext(std::string_view source, std::string file, const Variables& vars)
      : ParseContext(source, std::move(file), vars, source) {}

  std::string_view text;
  std::string filename;
  core::LineIndex index;
  const Variables& variables;
  core::Diagnostics diagnostics;
  std::map<std::string, std::string> used_variables;

  std::vector<std::size_t> inserted;

  [[nodiscard]] SourceLocation at(std::size_t offset) const {
    const auto before = std::lower_bound(inserted.begin(), inserted.end(), offset);
    auto [line, column] =
        index.position(offset - static_cast<std::size_t>(before - inserted.begin()));
    return SourceLocation{filename, line, column};
  }
  void error(std::size_t offset, std::string message) {
    diagnostics.error(at(offset), std::move(message));
  }
  void warning(std::size_t offset, std::string message) {
    diagnostics.warning(at(offset), std::move(message));
  }
  void note(std::size_t offset, std::string message) {
    diagnostics.note(at(offset), std::move(message));
  }
};

}  // namespace volley::profile::detail
