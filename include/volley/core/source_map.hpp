#pragma once
// The text of the files diagnostics point into, with a line index for each, so that a byte offset
// (pugixml's offset_debug(), or a position found by scanning) becomes a line and a column, and a
// diagnostic can quote its line with a caret under the column. Immutable once filled; any thread.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "volley/core/source_location.hpp"

namespace volley::core {

/// Line starts of one text. Columns are 1-based byte columns (as clang and ninja count them).
class LineIndex {
 public:
  LineIndex() = default;
  /// Indexes `text`; the text itself is not kept.
  explicit LineIndex(std::string_view text);

  /// 1-based {line, column} of byte `offset`; an offset past the end maps to the end of the text.
  [[nodiscard]] std::pair<std::uint32_t, std::uint32_t> position(std::size_t offset) const;
  /// Byte offset where 1-based `line` starts, or nullopt when there is no such line.
  [[nodiscard]] std::optional<std::size_t> line_start(std::uint32_t line) const;
  [[nodiscard]] std::size_t line_count() const { return starts_.size(); }

 private:
  std::vector<std::size_t> starts_{0};
  std::size_t size_ = 0;
};

/// File name -> text, for quoting source lines under diagnostics.
class SourceMap {
 public:
  /// Adds (or replaces) the text of `file`. `file` is the name used in SourceLocation::file.
  void add(std::string file, std::string text);

  /// The whole text of `file`, or nullptr when it was never added.
  [[nodiscard]] const std::string* text(std::string_view file) const;

  /// The location of byte `offset` in `file` (line 0 when the file is unknown).
  [[nodiscard]] SourceLocation locate(std::string_view file, std::size_t offset) const;

  /// The text of 1-based `line` of `file`, without its line ending; nullopt when unknown.
  [[nodiscard]] std::optional<std::string_view> line_text(std::string_view file,
                                                          std::uint32_t line) const;

 private:
  struct Entry {
    std::string text;
    LineIndex index;
  };
  std::map<std::string, Entry, std::less<>> files_;
};

/// The text of 1-based `line` of `text` without its line ending ("\n" or "\r\n").
std::optional<std::string_view> line_of(std::string_view text, const LineIndex& index,
                                        std::uint32_t line);

/// The two lines a diagnostic shows under its message: `   16 | <source>` and `      |   ^`.
/// The caret line copies tabs from the source so the caret stays under the column; `column` 0
/// gives the source line only. Each line ends with '\n'.
std::string render_excerpt(std::string_view line_text, std::uint32_t line, std::uint32_t column);

}  // namespace volley::core
