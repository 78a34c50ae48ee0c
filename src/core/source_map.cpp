#include "volley/core/source_map.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace volley::core {

LineIndex::LineIndex(std::string_view text) : size_(text.size()) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') starts_.push_back(i + 1);
  }
}

std::pair<std::uint32_t, std::uint32_t> LineIndex::position(std::size_t offset) const {
  offset = std::min(offset, size_);
  // The last line start that is <= offset.
  auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  const auto line = static_cast<std::size_t>(it - starts_.begin());
  const std::size_t column = offset - starts_[line - 1] + 1;
  return {static_cast<std::uint32_t>(line), static_cast<std::uint32_t>(column)};
}

std::optional<std::size_t> LineIndex::line_start(std::uint32_t line) const {
  if (line == 0 || line > starts_.size()) return std::nullopt;
  return starts_[line - 1];
}

std::optional<std::string_view> line_of(std::string_view text, const LineIndex& index,
                                        std::uint32_t line) {
  const auto start = index.line_start(line);
  if (!start || *start > text.size()) return std::nullopt;
  // The next line's start bounds this one: no scan, so quoting a huge line stays cheap.
  const auto next = index.line_start(line + 1);
  std::size_t end = next ? *next - 1 : text.size();
  end = std::min(end, text.size());
  std::string_view result = text.substr(*start, end - *start);
  if (!result.empty() && result.back() == '\r') result.remove_suffix(1);
  return result;
}

namespace {

std::string render_lines(std::string_view line_text, std::uint32_t line, std::uint32_t column) {
  std::string out = fmt::format("{:>5} | {}\n", line, line_text);
  if (column == 0) return out;
  out += "      | ";
  // Copy tabs so the caret lines up however the terminal expands them; skip UTF-8 continuation
  // bytes, which take no column on screen.
  const std::size_t before = std::min<std::size_t>(column - 1, line_text.size());
  for (std::size_t i = 0; i < before; ++i) {
    const auto c = static_cast<unsigned char>(line_text[i]);
    if ((c & 0xC0U) == 0x80U) continue;
    out += (c == '\t') ? '\t' : ' ';
  }
  out += "^\n";
  return out;
}

}  // namespace

std::string render_excerpt(std::string_view line_text, std::uint32_t line, std::uint32_t column) {
  // A very long line (a generated profile on one line) is shown as a window around the column,
  // so that each diagnostic stays readable and the output stays linear in their number.
  constexpr std::size_t kMaxWidth = 160;
  if (line_text.size() > kMaxWidth) {
    const std::size_t at = column == 0 ? 0 : column - 1;
    const std::size_t start = at > kMaxWidth / 2 ? at - kMaxWidth / 2 : 0;
    const std::size_t len =
        std::min(kMaxWidth, line_text.size() - std::min(start, line_text.size()));
    std::string window = start > 0 ? "..." : "";
    const std::size_t shift = window.size();
    window += line_text.substr(std::min(start, line_text.size()), len);
    if (start + len < line_text.size()) window += "...";
    const auto new_column =
        column == 0 ? 0U : static_cast<std::uint32_t>(at - std::min(start, at) + shift + 1);
    return render_lines(window, line, new_column);
  }
  return render_lines(line_text, line, column);
}

void SourceMap::add(std::string file, std::string text) {
  Entry entry{std::move(text), {}};
  entry.index = LineIndex(entry.text);
  files_.insert_or_assign(std::move(file), std::move(entry));
}

const std::string* SourceMap::text(std::string_view file) const {
  auto it = files_.find(file);
  return it == files_.end() ? nullptr : &it->second.text;
}

SourceLocation SourceMap::locate(std::string_view file, std::size_t offset) const {
  auto it = files_.find(file);
  if (it == files_.end()) return SourceLocation{std::string(file), 0, 0};
  auto [line, column] = it->second.index.position(offset);
  return SourceLocation{std::string(file), line, column};
}

std::optional<std::string_view> SourceMap::line_text(std::string_view file,
                                                     std::uint32_t line) const {
  auto it = files_.find(file);
  if (it == files_.end()) return std::nullopt;
  return line_of(it->second.text, it->second.index, line);
}

}  // namespace volley::core
