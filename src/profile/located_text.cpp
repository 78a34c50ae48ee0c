#include "located_text.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

namespace volley::profile::detail {

LocatedText LocatedText::uniform(std::string_view text, std::size_t offset) {
  LocatedText out;
  out.text = std::string(text);
  out.offsets.assign(text.size() + 1, offset);
  return out;
}

void LocatedText::push(char c, std::size_t offset) {
  if (offsets.empty()) offsets.push_back(offset);
  text.push_back(c);
  offsets.back() = offset;
  offsets.push_back(offset + 1);
}

std::size_t LocatedText::offset_at(std::size_t i) const {
  if (offsets.empty()) return 0;
  return offsets[std::min(i, offsets.size() - 1)];
}

LocatedText LocatedText::slice(std::size_t pos, std::size_t len) const {
  LocatedText out;
  pos = std::min(pos, text.size());
  len = std::min(len, text.size() - pos);
  out.text = text.substr(pos, len);
  out.offsets.assign(
      offsets.begin() + static_cast<std::ptrdiff_t>(std::min(pos, offsets.size())),
      offsets.begin() + static_cast<std::ptrdiff_t>(std::min(pos + len + 1, offsets.size())));
  if (out.offsets.size() != out.text.size() + 1) out = uniform(out.text, offset_at(pos));
  return out;
}

namespace {

void append_utf8(LocatedText& out, std::uint32_t cp, std::size_t offset) {
  std::array<char, 4> buf{};
  std::size_t n = 0;
  if (cp < 0x80) {
    buf[n++] = static_cast<char>(cp);
  } else if (cp < 0x800) {
    buf[n++] = static_cast<char>(0xC0 | (cp >> 6));
    buf[n++] = static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    buf[n++] = static_cast<char>(0xE0 | (cp >> 12));
    buf[n++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    buf[n++] = static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    buf[n++] = static_cast<char>(0xF0 | ((cp >> 18) & 0x07));
    buf[n++] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    buf[n++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    buf[n++] = static_cast<char>(0x80 | (cp & 0x3F));
  }
  for (std::size_t i = 0; i < n; ++i) out.push(buf[i], offset);
}

/// The code point of "&...;" at the front of `s` and its length, or {0, 0} when not an entity.
std::pair<std::uint32_t, std::size_t> read_entity(std::string_view s) {
  static constexpr std::array<std::pair<std::string_view, char>, 5> kNamed{
      {{"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&apos;", '\''}, {"&quot;", '"'}}};
  for (const auto& [name, c] : kNamed) {
    if (s.substr(0, name.size()) == name) return {static_cast<std::uint32_t>(c), name.size()};
  }
  if (s.size() < 4 || s[1] != '#') return {0, 0};
  const bool hex = s[2] == 'x';
  std::uint32_t cp = 0;
  std::size_t i = hex ? 3 : 2;
  const std::size_t digits_start = i;
  for (; i < s.size() && i < 16 && s[i] != ';'; ++i) {
    const char c = s[i];
    std::uint32_t d = 0;
    if (c >= '0' && c <= '9') {
      d = static_cast<std::uint32_t>(c - '0');
    } else if (hex && c >= 'a' && c <= 'f') {
      d = static_cast<std::uint32_t>(c - 'a' + 10);
    } else if (hex && c >= 'A' && c <= 'F') {
      d = static_cast<std::uint32_t>(c - 'A' + 10);
    } else {
      return {0, 0};
    }
    cp = cp * (hex ? 16U : 10U) + d;
  }
  if (i == digits_start || i >= s.size() || s[i] != ';' || cp > 0x10FFFF) return {0, 0};
  return {cp, i + 1};
}

}  // namespace

LocatedText decode_attribute(std::string_view raw, std::size_t offset) {
  LocatedText out;
  out.offsets.push_back(offset);
  for (std::size_t i = 0; i < raw.size();) {
    const char c = raw[i];
    if (c == '&') {
      const auto [cp, len] = read_entity(raw.substr(i));
      if (len != 0) {
        append_utf8(out, cp, offset + i);
        i += len;
        continue;
      }
    }
    if (c == '\r' && i + 1 < raw.size() && raw[i + 1] == '\n') {
      out.push(' ', offset + i);
      i += 2;
      continue;
    }
    out.push((c == '\t' || c == '\n' || c == '\r') ? ' ' : c, offset + i);
    ++i;
  }
  out.offsets.back() = offset + raw.size();
  return out;
}

}  // namespace volley::profile::detail
