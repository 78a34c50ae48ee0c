#include "expand.hpp"

#include <fmt/format.h>

namespace volley::profile::detail {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

Expansion expand_variables(const LocatedText& in, ExpandMode mode, const Variables& variables,
                           std::map<std::string, std::string>& used) {
  Expansion out;
  out.text.offsets.push_back(in.offset_at(0));
  const std::string& s = in.text;

  auto substitute = [&](const std::string& name, std::size_t dollar) {
    const std::size_t at = in.offset_at(dollar);
    if (auto value = variables.lookup(name)) {
      used[name] = *value;
      for (char c : *value) out.text.push(c, at);
      return;
    }
    out.problems.push_back(
        {at, fmt::format("variable '{}' is not set (give it with --set {}=VALUE)", name, name)});
    out.holes.push_back(out.text.text.size());
  };

  for (std::size_t i = 0; i < s.size();) {
    if (s[i] != '$' || i + 1 >= s.size()) {
      out.text.push(s[i], in.offset_at(i));
      ++i;
      continue;
    }
    if (s[i + 1] == '{') {
      const std::size_t close = s.find('}', i + 2);
      if (close == std::string::npos) {
        out.problems.push_back({in.offset_at(i), "unterminated '${': expected '}'"});
        out.holes.push_back(out.text.text.size());
        break;
      }
      const std::string name = s.substr(i + 2, close - i - 2);
      bool valid = !name.empty();
      for (char c : name) valid = valid && is_name_char(c);
      if (!valid) {
        out.problems.push_back(
            {in.offset_at(i),
             name.empty()
                 ? std::string("empty variable name '${}'")
                 : fmt::format("invalid variable name '{}' (use letters, digits and '_')", name)});
        out.holes.push_back(out.text.text.size());
      } else {
        substitute(name, i);
      }
      i = close + 1;
      continue;
    }
    if (!is_name_char(s[i + 1])) {  // a lone '$' is just a character
      out.text.push(s[i], in.offset_at(i));
      ++i;
      continue;
    }
    std::size_t end = i + 1;
    while (end < s.size() && is_name_char(s[end])) ++end;
    const std::string name = s.substr(i + 1, end - i - 1);
    bool starts_ok = false;
    bool ends_ok = false;
    if (mode == ExpandMode::kWholeValue) {
      starts_ok = i == 0;
      ends_ok = end == s.size();
    } else {
      starts_ok = i == 0 || is_space(s[i - 1]) || s[i - 1] == '=';
      ends_ok = end == s.size() || is_space(s[end]);
    }
    if (!starts_ok || !ends_ok) {
      // `$h:80` or `/tmp/$f.txt`: uperf would take it literally and fail much later.
      out.problems.push_back(
          {in.offset_at(i),
           fmt::format("'${}' must be a whole value; write '${{{}}}' to use it inside a value",
                       name, name)});
      out.holes.push_back(out.text.text.size());
      i = end;
      continue;
    }
    substitute(name, i);
    i = end;
  }
  out.text.offsets.back() = in.offset_at(s.size());
  return out;
}

}  // namespace volley::profile::detail
