#include "flowop_parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "flowop_draft.hpp"
#include "flowop_specs.hpp"
#include "option_table.hpp"
#include "volley/core/suggest.hpp"

namespace volley::profile::detail {
namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool hole_in(const std::vector<std::size_t>& holes, std::size_t from, std::size_t to) {
  // `holes` is ascending (expansion appends in order): a binary search keeps a profile with
  // thousands of unset variables linear.
  auto it = std::lower_bound(holes.begin(), holes.end(), from);
  return it != holes.end() && *it <= to;
}

/// One `key=value` or bare `flag` token: [begin, end) in the expanded text.
void read_option(ParseContext& ctx, FlowopDraft& draft, const Expansion& options, std::size_t begin,
                 std::size_t end) {
  const LocatedText& all = options.text;
  const std::string token = all.text.substr(begin, end - begin);
  const std::size_t eq_in_token = token.find('=');
  const std::size_t eq = eq_in_token == std::string::npos ? end : begin + eq_in_token;
  const std::size_t key_offset = all.offset_at(begin);
  // A variable that could not be expanded was already reported: say nothing more about it.
  if (hole_in(options.holes, begin, eq)) return;
  const bool value_unresolved = eq < end && hole_in(options.holes, eq + 1, end);

  const std::string raw_key = token.substr(0, eq - begin);
  if (raw_key.empty()) {
    ctx.error(key_offset, fmt::format("option '{}' has no name", token));
    return;
  }
  const std::string key = lower(raw_key);
  const OptionSpec* spec = find_option(key);
  if (spec == nullptr) {
    if (key == "stack" || key == "bblog") {
      // uperf sets these only on FreeBSD (TCP_FUNCTION_BLK, TCP_LOG); elsewhere it ignores them.
      ctx.warning(key_offset, fmt::format("option '{}' applies to FreeBSD's TCP only; ignored on "
                                          "Linux, as uperf ignores it there",
                                          raw_key));
      return;
    }
    if (is_unsupported_option(key)) {
      ctx.error(key_offset, fmt::format("option '{}' is not supported yet", raw_key));
    } else {
      ctx.error(key_offset, fmt::format("unknown option '{}'{}", raw_key,
                                        core::did_you_mean(key, option_names())));
      const std::string guess = core::closest(key, option_names());
      if (!guess.empty()) draft.suggested.insert(guess);
    }
    return;
  }
  if (auto [it, inserted] = draft.given.try_emplace(key, key_offset); !inserted) {
    ctx.error(key_offset, fmt::format("option '{}' is given twice", key));
    ctx.note(it->second, "first given here");
    return;
  }
  if (!applies(*spec, draft.kind) && spec->misplaced_is_error) {
    ctx.error(key_offset, fmt::format("option '{}' applies to {} only, not to '{}'", key,
                                      kinds_taking(*spec), name_of(draft.kind)));
    return;
  }
  if (!applies(*spec, draft.kind)) {
    // uperf's own profiles put duration= on reads and uperf ignores it: warn, keep running.
    ctx.warning(key_offset, fmt::format("option '{}' does not apply to '{}' and is ignored", key,
                                        name_of(draft.kind)));
    return;
  }
  const bool has_value = eq < end;
  if (!spec->takes_value && has_value && !spec->value_optional) {
    ctx.error(key_offset, fmt::format("option '{}' is a flag and takes no value", key));
    return;
  }
  if (spec->takes_value && (!has_value || (eq + 1 == end && !value_unresolved))) {
    ctx.error(key_offset, fmt::format("option '{}' needs a value ({}=...)", key, key));
    return;
  }
  if (value_unresolved) return;
  const LocatedText value =
      has_value ? all.slice(eq + 1, end - eq - 1) : LocatedText::uniform("", key_offset);
  spec->apply(value, draft, ctx);
}

void read_options(ParseContext& ctx, FlowopDraft& draft, const Expansion& options) {
  draft.unresolved = !options.holes.empty();
  const std::string& s = options.text.text;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    if (i >= s.size()) break;
    std::size_t end = i;
    while (end < s.size() && !is_space(s[end])) ++end;
    read_option(ctx, draft, options, i, end);
    i = end;
  }
}

}  // namespace

std::optional<Flowop> parse_flowop(ParseContext& ctx, FlowopKind kind, std::size_t element_offset,
                                   const Expansion* options) {
  const std::size_t errors_before = ctx.diagnostics.error_count();
  FlowopDraft draft;
  draft.kind = kind;
  if (options != nullptr) read_options(ctx, draft, *options);
  auto spec = build_spec(ctx, draft, element_offset);
  if (!spec || ctx.diagnostics.error_count() != errors_before) return std::nullopt;
  return Flowop{std::string(name_of(kind)), std::move(*spec), draft.common, ctx.at(element_offset)};
}

}  // namespace volley::profile::detail
