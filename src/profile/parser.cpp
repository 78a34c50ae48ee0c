#include "volley/profile/parser.hpp"

#include "volley/core/limits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <pugixml.hpp>
#include <span>

#include "expand.hpp"
#include "flowop_parser.hpp"
#include "lenient_xml.hpp"
#include "parse_context.hpp"
#include "tag_scanner.hpp"
#include "validate_group.hpp"
#include "volley/core/units.hpp"
#include "volley/core/suggest.hpp"

namespace volley::profile {
namespace {

using detail::ExpandMode;
using detail::Expansion;
using detail::LocatedText;
using detail::ParseContext;

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Byte offset of the '<' that opens `node` (pugixml's offset is that of the name after it).
std::size_t element_offset(pugi::xml_node node) {
  const std::ptrdiff_t name = node.offset_debug();
  return name > 0 ? static_cast<std::size_t>(name - 1) : 0;
}

struct Attribute {
  std::size_t name_offset = 0;
  Expansion value;
  [[nodiscard]] bool resolved() const { return value.problems.empty(); }
  [[nodiscard]] std::size_t value_offset() const { return value.text.offset_at(0); }
};

using Attributes = std::map<std::string, Attribute>;

/// Reads, checks and expands the attributes of `node`, reporting unknown and duplicate ones.
Attributes read_attributes(ParseContext& ctx, pugi::xml_node node, std::string_view element,
                           std::span<const std::string_view> allowed) {
  const std::size_t name_offset =
      static_cast<std::size_t>(std::max<std::ptrdiff_t>(node.offset_debug(), 0));
  const auto raw = detail::scan_attributes(ctx.text, name_offset);
  Attributes out;
  std::size_t index = 0;
  for (pugi::xml_attribute attr : node.attributes()) {
    const std::string_view name = attr.name();
    const std::string_view value = attr.value();
    // Locations come from re-reading the tag; if that disagrees with pugixml, fall back to the
    // element's own position rather than point somewhere wrong.
    std::size_t at = element_offset(node);
    LocatedText located = LocatedText::uniform(value, at);
    if (index < raw.size() && raw[index].name == name) {
      at = raw[index].name_offset;
      located = detail::decode_attribute(raw[index].raw_value, raw[index].value_offset);
      if (located.text != value) located = LocatedText::uniform(value, raw[index].value_offset);
    }
    ++index;
    const std::string key = lower(name);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      ctx.error(at, fmt::format("unknown attribute '{}' on <{}>{}", name, element,
                                core::did_you_mean(key, allowed)));
      continue;
    }
    if (auto it = out.find(key); it != out.end()) {
      ctx.error(at, fmt::format("duplicate attribute '{}' on <{}>", key, element));
      ctx.note(it->second.name_offset, "first given here");
      continue;
    }
    const ExpandMode mode = key == "options" ? ExpandMode::kOptions : ExpandMode::kWholeValue;
    Attribute a{at, detail::expand_variables(located, mode, ctx.variables, ctx.used_variables)};
    for (const auto& problem : a.value.problems) ctx.error(problem.offset, problem.message);
    out.emplace(key, std::move(a));
  }
  return out;
}

const Attribute* find(const Attributes& attrs, const std::string& key) {
  auto it = attrs.find(key);
  return it == attrs.end() ? nullptr : &it->second;
}

/// The element children of `parent` named `child`; anything else that is not whitespace or a
/// comment is reported.
std::vector<pugi::xml_node> children(ParseContext& ctx, pugi::xml_node parent,
                                     std::string_view parent_name, std::string_view child) {
  std::vector<pugi::xml_node> out;
  for (pugi::xml_node node : parent.children()) {
    if (node.type() == pugi::node_element) {
      const std::string name = lower(node.name());
      if (name == child) {
        out.push_back(node);
      } else {
        const std::array<std::string_view, 1> expected{child};
        const std::string hint = core::closest(name, expected).empty()
                                     ? fmt::format("; expected <{}>", child)
                                     : fmt::format("; did you mean <{}>?", child);
        ctx.error(element_offset(node), fmt::format("unexpected element <{}> inside <{}>{}",
                                                    node.name(), parent_name, hint));
      }
    } else if (node.type() == pugi::node_pcdata || node.type() == pugi::node_cdata) {
      const std::string_view text = node.value();
      const std::size_t first = text.find_first_not_of(" \t\r\n");
      if (first == std::string_view::npos) continue;
      const auto base = static_cast<std::size_t>(std::max<std::ptrdiff_t>(node.offset_debug(), 0));
      ctx.error(base + first, fmt::format("unexpected text inside <{}>", parent_name));
    }
  }
  return out;
}

/// A count attribute >= 1 (nthreads, iterations), or nullopt after reporting.
std::optional<std::uint64_t> positive_count(ParseContext& ctx, const Attribute& a,
                                            std::string_view name, std::string_view why) {
  const auto parsed = core::parse_count(a.value.text.text);
  if (!parsed.value) {
    ctx.error(a.value_offset(), fmt::format("attribute '{}': {}", name, parsed.error));
    return std::nullopt;
  }
  if (*parsed.value == 0) {
    ctx.error(a.value_offset(), fmt::format("'{}' must be at least 1{}", name, why));
    return std::nullopt;
  }
  return parsed.value;
}

std::optional<Flowop> parse_flowop_element(ParseContext& ctx, pugi::xml_node node) {
  static constexpr std::array<std::string_view, 2> kAllowed{"type", "options"};
  const std::size_t at = element_offset(node);
  const Attributes attrs = read_attributes(ctx, node, "flowop", kAllowed);
  const Attribute* type = find(attrs, "type");
  if (type == nullptr) {
    ctx.error(at, "flowop has no type (type=\"read\", \"write\", ...)");
    return std::nullopt;
  }
  if (!type->resolved()) return std::nullopt;
  const std::string name = lower(type->value.text.text);
  const auto kind = detail::flowop_kind(name);
  if (!kind) {
    // The type is the flowop's identity: point at the element, as for any other bad element.
    ctx.error(at, fmt::format("unknown flowop type '{}'{}", type->value.text.text,
                              core::did_you_mean(name, detail::flowop_names())));
    return std::nullopt;
  }
  const Attribute* options = find(attrs, "options");
  return detail::parse_flowop(ctx, *kind, at, options ? &options->value : nullptr);
}

std::optional<Transaction> parse_transaction(ParseContext& ctx, pugi::xml_node node) {
  static constexpr std::array<std::string_view, 4> kAllowed{"name", "iterations", "duration",
                                                            "rate"};
  const std::size_t errors_before = ctx.diagnostics.error_count();
  const std::size_t at = element_offset(node);
  const Attributes attrs = read_attributes(ctx, node, "transaction", kAllowed);
  Transaction txn;
  txn.location = ctx.at(at);
  if (const Attribute* name = find(attrs, "name")) txn.name = name->value.text.text;
  const Attribute* iterations = find(attrs, "iterations");
  const Attribute* duration = find(attrs, "duration");
  if (iterations != nullptr && duration != nullptr) {
    const Attribute* second =
        iterations->name_offset > duration->name_offset ? iterations : duration;
    ctx.error(second->name_offset, "a transaction has iterations or duration, not both");
  } else if (iterations != nullptr && iterations->resolved()) {
    const auto parsed = core::parse_count(iterations->value.text.text);
    if (parsed.value && *parsed.value == 0) {
      // uperf runs such a transaction zero times; its barrier still counts, so numbering holds.
      ctx.warning(iterations->value_offset(),
                  "iterations=\"0\": the transaction is skipped (as uperf skips it)");
      txn.bound = Iterations{0};
    } else if (auto n = positive_count(ctx, *iterations, "iterations", "")) {
      txn.bound = Iterations{*n};
    }
  } else if (duration != nullptr && duration->resolved()) {
    const auto parsed =
        core::parse_duration(duration->value.text.text, core::DurationSyntax::kUperf);
    if (!parsed.value) {
      ctx.error(duration->value_offset(), fmt::format("attribute 'duration': {}", parsed.error));
    } else if (parsed.value->count() == 0) {
      ctx.error(duration->value_offset(), "'duration' must be longer than 0");
    } else {
      if (!parsed.warning.empty()) {
        ctx.warning(duration->value_offset(),
                    fmt::format("attribute 'duration': {}", parsed.warning));
      }
      txn.bound = Duration{*parsed.value};
    }
  }
  if (const Attribute* rate = find(attrs, "rate"); rate != nullptr && rate->resolved()) {
    const auto parsed = core::parse_rate(rate->value.text.text);
    if (!parsed.value) {
      ctx.error(rate->value_offset(), fmt::format("attribute 'rate': {}", parsed.error));
    } else if (*parsed.value <= 0.0) {
      ctx.error(rate->value_offset(), "'rate' must be greater than 0");
    } else {
      txn.rate_per_s = parsed.value;
    }
  }
  const auto flowops = children(ctx, node, "transaction", "flowop");
  if (flowops.empty()) ctx.error(at, "transaction has no <flowop>");
  for (pugi::xml_node child : flowops) {
    if (auto flowop = parse_flowop_element(ctx, child)) txn.flowops.push_back(std::move(*flowop));
  }
  if (ctx.diagnostics.error_count() != errors_before) return std::nullopt;
  return txn;
}

std::optional<Group> parse_group(ParseContext& ctx, pugi::xml_node node) {
  static constexpr std::array<std::string_view, 3> kAllowed{"name", "nthreads", "nprocs"};
  const std::size_t errors_before = ctx.diagnostics.error_count();
  const std::size_t at = element_offset(node);
  const Attributes attrs = read_attributes(ctx, node, "group", kAllowed);
  Group group;
  group.location = ctx.at(at);
  if (const Attribute* name = find(attrs, "name")) group.name = name->value.text.text;
  const Attribute* nthreads = find(attrs, "nthreads");
  const Attribute* nprocs = find(attrs, "nprocs");
  if (nthreads != nullptr && nprocs != nullptr) {
    const Attribute* second = nthreads->name_offset > nprocs->name_offset ? nthreads : nprocs;
    ctx.error(second->name_offset, "a group has nthreads or nprocs, not both");
  } else if (const Attribute* n = nthreads != nullptr ? nthreads : nprocs;
             n != nullptr && n->resolved()) {
    const std::string_view name = n == nthreads ? "nthreads" : "nprocs";
    if (auto count = positive_count(ctx, *n, name, " (uperf hangs on 0)")) {
      if (*count > core::kMaxStrandsPerGroup) {
        ctx.error(n->value_offset(), fmt::format("'{}' is {}; the most is {} strands per group",
                                                 name, *count, core::kMaxStrandsPerGroup));
      } else {
        group.nthreads = *count;
        group.from_nprocs = n == nprocs;
      }
    }
  }
  const auto transactions = children(ctx, node, "group", "transaction");
  if (transactions.empty()) ctx.error(at, "group has no <transaction>");
  for (pugi::xml_node child : transactions) {
    if (auto txn = parse_transaction(ctx, child)) group.transactions.push_back(std::move(*txn));
  }
  if (ctx.diagnostics.error_count() != errors_before) return std::nullopt;
  // Cross-element rules only for a group that parsed cleanly: in a group that lost a flowop to
  // an error, "no connection is open" would be a consequence, not a second problem.
  detail::validate_group(group, ctx.diagnostics);
  return group;
}

void parse_root(ParseContext& ctx, const pugi::xml_document& doc, Profile& profile) {
  std::vector<pugi::xml_node> roots;
  for (pugi::xml_node node : doc.children()) {
    if (node.type() == pugi::node_element) roots.push_back(node);
  }
  for (std::size_t i = 1; i < roots.size(); ++i) {
    ctx.error(element_offset(roots[i]),
              fmt::format("more than one root element (<{}>); a file holds one <profile>",
                          roots[i].name()));
  }
  if (roots.empty()) {
    ctx.diagnostics.error(SourceLocation{ctx.filename, 0, 0}, "the file has no root element");
    return;
  }
  if (roots.empty()) {
    ctx.diagnostics.error(SourceLocation{ctx.filename, 0, 0}, "the file has no root element");
    return;
  }
  const pugi::xml_node root = roots.front();
  const std::string root_name = lower(root.name());
  profile.location = ctx.at(element_offset(root));
  if (root_name != "profile") {
    const std::array<std::string_view, 1> expected{"profile"};
    const std::string hint = core::closest(root_name, expected).empty()
                                 ? std::string("; expected <profile>")
                                 : std::string("; did you mean <profile>?");
    ctx.error(element_offset(root), fmt::format("the root element is <{}>{}", root.name(), hint));
    return;
  }
  static constexpr std::array<std::string_view, 1> kAllowed{"name"};
  const Attributes attrs = read_attributes(ctx, root, "profile", kAllowed);
  if (const Attribute* name = find(attrs, "name")) profile.name = name->value.text.text;
  const auto groups = children(ctx, root, "profile", "group");
  if (groups.empty()) ctx.error(element_offset(root), "profile has no <group>");
  for (pugi::xml_node child : groups) {
    if (auto group = parse_group(ctx, child)) profile.groups.push_back(std::move(*group));
  }
}

std::string xml_error_message(const pugi::xml_parse_result& result) {
  if (result.status == pugi::status_no_document_element) {
    return "the file has no root element; expected <profile>";
  }
  std::string description = result.description();
  if (!description.empty()) {
    description[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(description[0])));
  }
  return fmt::format("malformed XML: {}", description);
}

/// Why the file ends with something open, when pugixml's error lies in that unfinished tail
/// (and not at an earlier, other problem).
std::optional<detail::EarlyEnd> early_end(std::string_view text, std::size_t error_at) {
  auto end = detail::explain_early_end(text);
  if (!end || error_at < end->tail) return std::nullopt;
  return end;
}

/// Orders diagnostics by place in the file; a note stays right after the item it belongs to.
core::Diagnostics in_file_order(const core::Diagnostics& in) {
  std::vector<std::vector<core::Diagnostic>> clusters;
  for (const auto& d : in.items()) {
    if (d.severity != core::Severity::kNote || clusters.empty()) clusters.emplace_back();
    clusters.back().push_back(d);
  }
  std::stable_sort(clusters.begin(), clusters.end(), [](const auto& a, const auto& b) {
    const auto& la = a.front().location;
    const auto& lb = b.front().location;
    return std::tie(la.line, la.column) < std::tie(lb.line, lb.column);
  });
  core::Diagnostics out;
  for (const auto& cluster : clusters) {
    for (const auto& d : cluster) out.add(d);
  }
  return out;
}

}  // namespace

ParseResult parse_profile(std::string_view text, const std::string& filename,
                          const Variables& variables) {
  // What uperf's reader accepts and XML does not (bare attribute values, end tags in another
  // case, stray end tags) is made XML first; locations still point into the file as written.
  detail::QuotedText quoted = detail::quote_bare_attribute_values(text);
  ParseContext ctx(quoted.text, filename, variables, text, quoted.inserted);
  for (std::size_t k = 0; k < quoted.inserted.size(); k += 2) {
    ctx.warning(quoted.inserted[k] + 1,
                "attribute value without quotes: read as uperf reads it (XML wants quotes)");
  }
  ParseResult result;
  Profile profile;
  profile.file = filename;
  pugi::xml_document doc;
  pugi::xml_parse_result xml;
  detail::Mismatch mismatch;
  // Each pass blanks one stray end tag (same length, so offsets hold); a file has few.
  for (int pass = 0; pass < 100; ++pass) {
    // parse_default keeps entity decoding and attribute whitespace normalisation; no
    // parse_ws_pcdata, so whitespace between elements produces no nodes.
    xml = doc.load_buffer(quoted.text.data(), quoted.text.size(), pugi::parse_default,
                          pugi::encoding_utf8);
    if (xml.status != pugi::status_end_element_mismatch) break;
    mismatch = detail::explain_mismatch(
        quoted.text, static_cast<std::size_t>(std::max<std::ptrdiff_t>(xml.offset, 0)));
    if (mismatch.kind != detail::Mismatch::Kind::kStray) break;
    ctx.warning(mismatch.begin, mismatch.message + "; ignored, as uperf ignores it");
    std::fill(quoted.text.begin() + static_cast<std::ptrdiff_t>(mismatch.begin),
              quoted.text.begin() + static_cast<std::ptrdiff_t>(mismatch.end), ' ');
  }
  const std::size_t last = quoted.text.find_last_not_of(" \t\r\n");
  const auto at = static_cast<std::size_t>(std::max<std::ptrdiff_t>(xml.offset, 0));
  const auto ended_early = xml ? std::nullopt : early_end(quoted.text, at);
  if (last == std::string::npos) {
    // Nothing but blanks: the file was cut before its first tag.
    ctx.error(0, "the file is empty; expected <profile>");
  } else if (xml.status == pugi::status_no_document_element) {
    // Nothing to point at: a file with only comments.
    ctx.diagnostics.error(SourceLocation{filename, 0, 0}, xml_error_message(xml));
  } else if (ended_early) {
    // Cut off, or missing its closing tags: said where the file ends, with what is open.
    ctx.error(last + 1, ended_early->message);
  } else if (!xml) {
    const bool explained = xml.status == pugi::status_end_element_mismatch &&
                           mismatch.kind != detail::Mismatch::Kind::kUnknown;
    ctx.error(at, explained ? fmt::format("malformed XML: {}", mismatch.message)
                            : xml_error_message(xml));
  } else {
    parse_root(ctx, doc, profile);
  }
  result.diagnostics = in_file_order(ctx.diagnostics);
  result.used_variables = std::move(ctx.used_variables);
  if (!result.diagnostics.has_errors()) result.profile = std::move(profile);
  return result;
}

}  // namespace volley::profile
