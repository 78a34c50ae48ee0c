#include "tag_scanner.hpp"

namespace volley::profile::detail {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

std::vector<RawAttribute> scan_attributes(std::string_view text, std::size_t name_offset) {
  std::vector<RawAttribute> out;
  std::size_t i = name_offset;
  const std::size_t n = text.size();
  while (i < n && !is_space(text[i]) && text[i] != '>' && text[i] != '/') ++i;  // element name
  while (true) {
    while (i < n && is_space(text[i])) ++i;
    if (i >= n || text[i] == '>' || text[i] == '/') break;
    const std::size_t name_start = i;
    while (i < n && !is_space(text[i]) && text[i] != '=' && text[i] != '>' && text[i] != '/') ++i;
    const std::size_t name_end = i;
    while (i < n && is_space(text[i])) ++i;
    if (i >= n || text[i] != '=') break;
    ++i;
    while (i < n && is_space(text[i])) ++i;
    if (i >= n || (text[i] != '"' && text[i] != '\'')) break;
    const char quote = text[i++];
    const std::size_t value_start = i;
    while (i < n && text[i] != quote) ++i;
    if (i >= n) break;
    out.push_back({text.substr(name_start, name_end - name_start), name_start,
                   text.substr(value_start, i - value_start), value_start});
    ++i;
  }
  return out;
}

}  // namespace volley::profile::detail
