#include "lenient_xml.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "volley/core/grouped_count.hpp"
#include "volley/core/suggest.hpp"

namespace volley::profile::detail {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// The end of the construct that starts at `i` when it is a comment, a processing instruction,
/// CDATA or a DOCTYPE (one past its last character), else `i`.
std::size_t skip_markup(std::string_view text, std::size_t i) {
  const auto past = [&](std::string_view close) {
    const std::size_t at = text.find(close, i);
    return at == std::string_view::npos ? text.size() : at + close.size();
  };
  const std::string_view rest = text.substr(i);
  if (rest.starts_with("<!--")) return past("-->");
  if (rest.starts_with("<?")) return past("?>");
  if (rest.starts_with("<![CDATA[")) return past("]]>");
  if (rest.starts_with("<!")) return past(">");
  return i;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

struct OpenTag {
  std::string name;
  std::size_t offset = 0;
};

std::size_t line_of(std::string_view text, std::size_t offset) {
  return 1 + static_cast<std::size_t>(std::count(
                 text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

/// Something a file left open: a phrase naming it and the offset where it starts.
struct Unclosed {
  std::string what;
  std::size_t offset = 0;
};

/// "the file ended early: X (opened at line L) is not closed; nor are ...", innermost first. Past
/// kListed, the middle is counted, not listed: a file can leave thousands open, and each line
/// number costs a scan of the file.
std::string describe_unclosed(std::string_view text, const std::vector<Unclosed>& items) {
  constexpr std::size_t kListed = 6;
  std::vector<std::string> named;  // what the message lists after the first, each with its line
  const auto name = [&](const Unclosed& u) {
    return fmt::format("{} (line {})", u.what, line_of(text, u.offset));
  };
  if (items.size() <= kListed) {
    for (std::size_t k = 1; k < items.size(); ++k) named.push_back(name(items[k]));
  } else {
    for (std::size_t k = 1; k + 1 < kListed; ++k) named.push_back(name(items[k]));
    named.back() += fmt::format(" and {} more, the outermost {}",
                                core::format_grouped(items.size() - kListed), name(items.back()));
  }
  std::string message = fmt::format("the file ended early: {} (opened at line {}) is not closed",
                                    items.front().what, line_of(text, items.front().offset));
  for (std::size_t k = 0; k < named.size(); ++k) {
    if (k == 0)
      message += items.size() == 2 ? "; nor is " : "; nor are ";
    else
      message += k + 1 == named.size() && items.size() <= kListed ? " and " : ", ";
    message += named[k];
  }
  return message;
}

}  // namespace

std::size_t QuotedText::original_offset(std::size_t at) const {
  const auto before = std::lower_bound(inserted.begin(), inserted.end(), at);
  return at - static_cast<std::size_t>(before - inserted.begin());
}

QuotedText quote_bare_attribute_values(std::string_view text) {
  QuotedText out;
  out.text.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '<') {
      out.text += text[i++];
      continue;
    }
    if (const std::size_t end = skip_markup(text, i); end != i) {
      out.text.append(text.substr(i, end - i));
      i = end;
      continue;
    }
    // A start or end tag: copy its name lower-cased (uperf reads `<Profile>...</profile>`
    // without case, as volley's parser does, but XML end tags must match exactly), then walk its
    // attributes.
    out.text += text[i++];
    if (i < text.size() && text[i] == '/') out.text += text[i++];
    while (i < text.size() && !is_space(text[i]) && text[i] != '>' && text[i] != '/') {
      out.text += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i++])));
    }
    while (i < text.size() && text[i] != '>') {
      const char c = text[i];
      if (c == '"' || c == '\'') {  // a quoted value: copy it whole
        const std::size_t close = text.find(c, i + 1);
        const std::size_t end = close == std::string_view::npos ? text.size() : close + 1;
        out.text.append(text.substr(i, end - i));
        i = end;
        continue;
      }
      out.text += c;
      ++i;
      if (c != '=') continue;
      while (i < text.size() && is_space(text[i])) out.text += text[i++];
      if (i >= text.size() || text[i] == '"' || text[i] == '\'' || text[i] == '>') continue;
      // A bare value: up to a blank, '>' or "/>".
      std::size_t end = i;
      while (end < text.size() && !is_space(text[end]) && text[end] != '>' &&
             !(text[end] == '/' && end + 1 < text.size() && text[end + 1] == '>')) {
        ++end;
      }
      out.bare_values.push_back(i);
      out.inserted.push_back(out.text.size());
      out.text += '"';
      out.text.append(text.substr(i, end - i));
      out.inserted.push_back(out.text.size());
      out.text += '"';
      i = end;
    }
  }
  return out;
}

Mismatch explain_mismatch(std::string_view text, std::size_t error_offset) {
  static constexpr std::array<std::string_view, 4> kElements{"profile", "group", "transaction",
                                                             "flowop"};
  std::vector<OpenTag> open;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '<') {
      ++i;
      continue;
    }
    if (const std::size_t end = skip_markup(text, i); end != i) {
      i = end;
      continue;
    }
    const std::size_t start = i;
    const bool closing = i + 1 < text.size() && text[i + 1] == '/';
    std::size_t name_end = start + (closing ? 2 : 1);
    while (name_end < text.size() && !is_space(text[name_end]) && text[name_end] != '>' &&
           text[name_end] != '/') {
      ++name_end;
    }
    const std::string name =
        lower(text.substr(start + (closing ? 2 : 1), name_end - start - (closing ? 2 : 1)));
    // The end of the tag, stepping over quoted values.
    std::size_t end = name_end;
    while (end < text.size() && text[end] != '>') {
      if (text[end] == '"' || text[end] == '\'') {
        const std::size_t close = text.find(text[end], end + 1);
        end = close == std::string_view::npos ? text.size() : close;
      }
      ++end;
    }
    const bool self_closing = end > 0 && end < text.size() && text[end - 1] == '/';
    if (!closing) {
      if (!self_closing) open.push_back({name, start});
      i = end + 1;
      continue;
    }
    // pugixml points at the end tag's name (or just past it): this is the tag it rejected.
    const bool rejected = error_offset >= start && error_offset <= end;
    if (!rejected && !open.empty() && open.back().name == name) {
      open.pop_back();
      i = end + 1;
      continue;
    }
    if (!rejected) return {};  // some other mismatch came first: say nothing rather than guess
    const std::size_t tag_end = std::min(end + 1, text.size());
    if (open.empty()) {
      return {Mismatch::Kind::kStray, fmt::format("a stray </{}>: no element is open here", name),
              start, tag_end};
    }
    const OpenTag& top = open.back();
    const auto deeper =
        std::find_if(open.rbegin(), open.rend(), [&](const OpenTag& t) { return t.name == name; });
    if (deeper == open.rend()) {
      const std::string guess = core::closest(top.name, kElements);
      if (!guess.empty() && guess == name && top.name != name) {
        return {Mismatch::Kind::kMisspelt,
                fmt::format("<{}> (line {}) is closed by </{}>: did you mean <{}>?", top.name,
                            line_of(text, top.offset), name, name),
                start, tag_end};
      }
      return {Mismatch::Kind::kStray,
              fmt::format("a stray </{}>: no <{}> is open here (the open element is <{}>, line {})",
                          name, name, top.name, line_of(text, top.offset)),
              start, tag_end};
    }
    return {Mismatch::Kind::kMissingEnd,
            fmt::format("</{}> while <{}> (line {}) is still open: a missing </{}>?", name,
                        top.name, line_of(text, top.offset), top.name),
            start, tag_end};
  }
  return {};
}

std::optional<EarlyEnd> explain_early_end(std::string_view text) {
  std::vector<OpenTag> open;
  std::string cut;  // what was cut off inside a tag or markup, as a phrase
  std::size_t cut_at = 0;
  std::size_t tail = 0;  // where the last complete construct starts
  std::size_t i = 0;
  while (i < text.size() && cut.empty()) {
    if (text[i] != '<') {
      ++i;
      continue;
    }
    const std::size_t start = i;
    if (const std::size_t end = skip_markup(text, i); end != i) {
      const std::string_view rest = text.substr(i);
      const std::string_view close = rest.starts_with("<!--")        ? "-->"
                                     : rest.starts_with("<?")        ? "?>"
                                     : rest.starts_with("<![CDATA[") ? "]]>"
                                                                     : ">";
      if (end == text.size() && !text.ends_with(close)) {
        cut = rest.starts_with("<!--")        ? "the comment"
              : rest.starts_with("<?")        ? "the processing instruction"
              : rest.starts_with("<![CDATA[") ? "the CDATA section"
                                              : "the declaration";
        cut_at = start;
        break;
      }
      tail = start;
      i = end;
      continue;
    }
    const bool closing = i + 1 < text.size() && text[i + 1] == '/';
    const std::size_t name_begin = start + (closing ? 2 : 1);
    std::size_t name_end = name_begin;
    while (name_end < text.size() && !is_space(text[name_end]) && text[name_end] != '>' &&
           text[name_end] != '/') {
      ++name_end;
    }
    const std::string name = lower(text.substr(name_begin, name_end - name_begin));
    const std::string tag = fmt::format("<{}{}>", closing ? "/" : "", name);
    // The end of the tag, stepping over quoted values; a value or a tag the file cuts is named.
    std::size_t end = name_end;
    while (end < text.size() && text[end] != '>') {
      if (text[end] == '"' || text[end] == '\'') {
        const std::size_t close = text.find(text[end], end + 1);
        if (close == std::string_view::npos) {
          // The attribute's name is the word before the '=' before the quote.
          std::size_t k = end;
          while (k > name_end && (is_space(text[k - 1]) || text[k - 1] == '=')) --k;
          std::size_t b = k;
          while (b > name_end && !is_space(text[b - 1])) --b;
          cut = fmt::format("the value of '{}' in {}", text.substr(b, k - b), tag);
          break;
        }
        end = close;
      }
      ++end;
    }
    if (cut.empty() && end >= text.size()) cut = fmt::format("the tag {}", tag);
    if (!cut.empty()) {
      cut_at = start;
      break;
    }
    tail = start;
    i = end + 1;
    if (closing) {
      if (open.empty() || open.back().name != name) return std::nullopt;  // a mismatch, not an end
      open.pop_back();
    } else if (text[end - 1] != '/') {
      open.push_back({name, start});
    }
  }
  if (cut.empty() && open.empty()) return std::nullopt;
  // Innermost first: what was cut, then each element still open.
  std::vector<Unclosed> items;
  if (!cut.empty()) items.push_back({cut, cut_at});
  for (auto it = open.rbegin(); it != open.rend(); ++it) {
    items.push_back({fmt::format("<{}>", it->name), it->offset});
  }
  std::string message = describe_unclosed(text, items);
  return EarlyEnd{std::move(message), cut.empty() ? tail : cut_at};
}

}  // namespace volley::profile::detail
