#pragma once
// Internal: what every step of parse_profile() shares: the file text and its line index, the
// diagnostics so far, the variables and the record of which ones were used.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "volley/core/diagnostic.hpp"
#include "volley/core/source_map.hpp"
#include "volley/profile/model.hpp"
#include "volley/profile/variables.hpp"

namespace volley::profile::detail {

struct ParseContext {
  ParseContext(std::string_view source, std::string file, const Variables& vars)
      : text(source), filename(std::move(file)), index(source), variables(vars) {}

  std::string_view text;
  std::string filename;
  core::LineIndex index;
  const Variables& variables;
  core::Diagnostics diagnostics;
  std::map<std::string, std::string> used_variables;

  [[nodiscard]] SourceLocation at(std::size_t offset) const {
    auto [line, column] = index.position(offset);
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
