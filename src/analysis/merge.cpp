#include "volley/analysis/merge.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "volley/core/build_info.hpp"
#include "volley/report/json_report.hpp"
#include "volley/report/units_format.hpp"
#include "volley/results/result_json.hpp"
#include "volley/results/run_result.hpp"

namespace volley::analysis {
namespace {

using nlohmann::json;

std::uint64_t u64(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

double number(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

const json& member(const json& j, const char* key) {
  static const json kNull;
  const auto it = j.find(key);
  return it != j.end() ? *it : kNull;
}

/// Why `a` and `b` did not run the same profile shape (groups, transactions, flowops); empty
/// when they did.
std::string shape_difference(const results::RunResult& a, const results::RunResult& b) {
  if (a.groups.size() != b.groups.size()) {
    return fmt::format("{} groups against {}", a.groups.size(), b.groups.size());
  }
  for (std::size_t g = 0; g < a.groups.size(); ++g) {
    const auto& ta = a.groups[g].transactions;
    const auto& tb = b.groups[g].transactions;
    if (a.groups[g].name != b.groups[g].name || ta.size() != tb.size()) {
      return fmt::format("group {} differs", g);
    }
    for (std::size_t t = 0; t < ta.size(); ++t) {
      const auto& fa = ta[t].flowops;
      const auto& fb = tb[t].flowops;
      bool same = ta[t].name == tb[t].name && fa.size() == fb.size();
      for (std::size_t f = 0; same && f < fa.size(); ++f) same = fa[f].type == fb[f].type;
      if (!same) return fmt::format("transaction {} of group {} differs", t, g);
    }
  }
  return {};
}

struct Window {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  [[nodiscard]] double seconds() const { return static_cast<double>(end_ns - start_ns) / 1e9; }
};

/// The wall-clock span of a result's timed steps: from the first one's release to the end of
/// the last one's window. nullopt when none of them started.
std::optional<Window> timed_window(const results::RunResult& result,
                                   const std::vector<std::size_t>& timed_steps) {
  std::optional<Window> w;
  for (const std::size_t step : timed_steps) {
    if (step >= result.windows.size() || result.windows[step].start_unix_ns == 0) continue;
    const results::TxnWindow& tw = result.windows[step];
    const std::int64_t s = tw.start_unix_ns;
    const std::int64_t e = s + tw.elapsed.count();
    if (!w) w = Window{s, e};
    w->start_ns = std::min(w->start_ns, s);
    w->end_ns = std::max(w->end_ns, e);
  }
  return w;
}

json window_json(const Window& w) {
  return json{{"start_unix_ns", w.start_ns},
              {"end_unix_ns", w.end_ns},
              {"start_time", report::iso8601_utc_ms(w.start_ns)},
              {"end_time", report::iso8601_utc_ms(w.end_ns)},
              {"seconds", w.seconds()}};
}

/// The document's timed steps; nullopt when they are not a list of step numbers.
std::optional<std::vector<std::size_t>> timed_steps_of(const json& doc) {
  const json& steps = member(doc, "timed_steps");
  if (!steps.is_array()) return std::nullopt;
  std::vector<std::size_t> out;
  for (const json& step : steps) {
    const bool whole =
        step.is_number_unsigned() || (step.is_number_integer() && step.get<std::int64_t>() >= 0);
    if (!whole) return std::nullopt;
    out.push_back(step.get<std::size_t>());
  }
  return out;
}

/// Why `doc` cannot be merged at all, judged from its envelope; empty when it can.
std::string unmergeable(const json& doc) {
  if (!doc.is_object() || !member(doc, "groups").is_array() || !member(doc, "totals").is_object() ||
      !timed_steps_of(doc)) {
    return "is not a volley run result document";
  }
  if (member(doc, "kind") == "merge") return "is already a merged document; merge the masters' own";
  if (const auto v = member(doc, "schema_version"); v != 1 && v != 2) {
    return "has an unknown schema_version";
  }
  if (member(doc, "timed_steps").empty()) return "has no timed steps";
  return {};
}

/// CPU, NIC or kernel counter samples of every host, each tagged with the document it came from.
json per_host(const std::vector<MergeSource>& sources, const char* key) {
  json out = json::array();
  for (const MergeSource& s : sources) {
    const json& sides = member(s.document, key);
    auto add = [&](const json& side, const char* role) {
      if (!side.is_object()) return;
      json j = side;
      j["source"] = s.name;
      j["side"] = role;
      out.push_back(std::move(j));
    };
    add(member(sides, "local"), "master");
    for (const json& remote : member(sides, "remote")) add(remote, "slave");
  }
  return out;
}

}  // namespace

MergeOutcome merge_run_documents(const std::vector<MergeSource>& sources) {
  MergeOutcome outcome;
  if (sources.size() < 2) {
    outcome.error = "merge needs the result documents of two or more masters";
    return outcome;
  }
  std::vector<results::RunResult> parts;
  std::vector<Window> windows;
  std::vector<std::size_t> timed_steps;
  for (const MergeSource& s : sources) {
    if (auto why = unmergeable(s.document); !why.empty()) {
      outcome.error = fmt::format("{} {}", s.name, why);
      return outcome;
    }
    std::string error;
    auto result = results::run_result_from_json(s.document, error);
    if (!result) {
      outcome.error = fmt::format(
          "{} has no results volley merge can read (written by an older "
          "volley, or edited): {}",
          s.name, error);
      return outcome;
    }
    const std::vector<std::size_t> steps = *timed_steps_of(s.document);
    if (parts.empty()) timed_steps = steps;
    const results::RunResult& reference = parts.empty() ? *result : parts.front();
    const std::string diff =
        steps != timed_steps ? "the timed steps differ" : shape_difference(reference, *result);
    if (!diff.empty()) {
      outcome.error = fmt::format("{} and {} did not run the same profile: {}",
                                  sources.front().name, s.name, diff);
      return outcome;
    }
    const auto w = timed_window(*result, timed_steps);
    if (!w) {
      outcome.error = fmt::format(
          "{} has no start times for its timed steps (the timed part never "
          "ran)",
          s.name);
      return outcome;
    }
    windows.push_back(*w);
    parts.push_back(std::move(*result));
  }
  Window overlap{std::numeric_limits<std::int64_t>::min(),
                 std::numeric_limits<std::int64_t>::max()};
  for (const Window& w : windows) {
    overlap.start_ns = std::max(overlap.start_ns, w.start_ns);
    overlap.end_ns = std::min(overlap.end_ns, w.end_ns);
  }
  if (overlap.end_ns <= overlap.start_ns) {
    std::string spans;
    for (std::size_t i = 0; i < sources.size(); ++i) {
      spans += fmt::format("\n  {}: {} to {}", sources[i].name,
                           report::iso8601_utc_ms(windows[i].start_ns),
                           report::iso8601_utc_ms(windows[i].end_ns));
    }
    outcome.error = fmt::format(
        "the masters did not run at the same time (their timed parts do not overlap), so their "
        "results do not add up to one; start them together with `volley run --start-at TIME`:{}",
        spans);
    return outcome;
  }
  // The same merge as a side spread over processes: counts and histograms add, each step's
  // window runs from the first release to the last end.
  results::RunResult merged;
  for (const results::RunResult& part : parts) results::merge_into(merged, part);

  std::string status = "ok";
  std::vector<std::string> failures;
  json source_list = json::array();
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const json& d = sources[i].document;
    const std::string st =
        member(d, "status").is_string() ? member(d, "status").get<std::string>() : "unknown";
    if (st != "ok") {
      status = (status == "failed" || st == "failed" || st == "unknown") ? "failed" : st;
      failures.push_back(fmt::format("{}: {} ({})", sources[i].name, st,
                                     member(d, "failure").is_string()
                                         ? member(d, "failure").get<std::string>()
                                         : "no reason given"));
    }
    json window = window_json(windows[i]);
    window["overlap_pct"] =
        windows[i].seconds() > 0 ? 100.0 * overlap.seconds() / windows[i].seconds() : 0.0;
    json slaves = json::array();
    for (const json& s : member(d, "slaves")) {
      slaves.push_back(json{{"host", member(s, "host")}, {"totals", member(s, "totals")}});
    }
    source_list.push_back(json{{"file", sources[i].name},
                               {"status", st},
                               {"failure", member(d, "failure")},
                               {"start_time", member(d, "start_time")},
                               {"command_line", member(d, "command_line")},
                               {"variables", member(member(d, "profile"), "variables")},
                               {"start_at", member(d, "start_at")},
                               {"timed_window", std::move(window)},
                               {"totals", member(d, "totals")},
                               {"slaves", std::move(slaves)},
                               {"comparison", member(d, "comparison")}});
  }
  if (!failures.empty()) {
    outcome.warning =
        fmt::format("not every master's run succeeded: {}", fmt::join(failures, "; "));
  }

  const json& first = sources.front().document;
  json doc = report::side_json(merged, timed_steps);
  doc["schema_version"] = 1;
  doc["kind"] = "merge";
  doc["volley_version"] = std::string(core::version());
  doc["status"] = status;
  doc["failure"] =
      failures.empty() ? json(nullptr) : json(fmt::format("{}", fmt::join(failures, "; ")));
  doc["profile"] = json{{"name", member(member(first, "profile"), "name")},
                        {"sha256", member(member(first, "profile"), "sha256")}};
  doc["masters"] = sources.size();
  doc["window"] = window_json(overlap);
  doc["timed_steps"] = timed_steps;
  doc["sources"] = std::move(source_list);
  doc["cpu"] = per_host(sources, "cpu");
  doc["nic"] = per_host(sources, "nic");
  doc["kernel"] = per_host(sources, "kernel");
  outcome.document = std::move(doc);
  return outcome;
}

std::string format_merged(const json& merged) {
  const json& window = member(merged, "window");
  std::string out =
      fmt::format("volley merge: {} masters, status {}\n  timed parts overlap {:.3f}s, {} to {}\n",
                  u64(merged, "masters"), member(merged, "status").get<std::string>(),
                  number(window, "seconds"), member(window, "start_time").get<std::string>(),
                  member(window, "end_time").get<std::string>());
  for (const json& s : member(merged, "sources")) {
    const json& w = member(s, "timed_window");
    const json& start_at = member(s, "start_at");
    const json& offset = member(start_at, "offset_ns");
    out += fmt::format(
        "  {}: {} txn, {} txn/s over {:.3f}s ({:.1f}% in the overlap){}\n",
        member(s, "file").get<std::string>(), u64(member(s, "totals"), "transactions"),
        report::format_count(number(member(s, "totals"), "transactions_per_s")),
        number(w, "seconds"), number(w, "overlap_pct"),
        offset.is_number()
            ? fmt::format(", started {:+.3f} ms from --start-at", offset.get<double>() / 1e6)
            : std::string());
  }
  out +=
      "\nTransactions, all masters (* = timed step; rates over each step's window, from the first\n"
      "master's release to the last one's end)\n";
  out += fmt::format("{:<12}{:>12} {:>8} {:>9} {:>10} {:>7} {:>7} {:>7} {:>6}\n", "", "Iterations",
                     "Txn/s", "Bytes", "Bits/s", "p50", "p99", "p99.9", "Errors");
  const json& timed = member(merged, "timed_steps");
  for (const json& g : member(merged, "groups")) {
    out +=
        fmt::format("{} ({} strands)\n", member(g, "name").get<std::string>(), u64(g, "strands"));
    for (const json& t : member(g, "transactions")) {
      const bool is_timed = std::find(timed.begin(), timed.end(), member(t, "step")) != timed.end();
      const json& l = member(t, "latency_ns");
      out += fmt::format(
          "{}{:<11}{:>12} {:>8} {:>9} {:>10} {:>7} {:>7} {:>7} {:>6}\n", is_timed ? '*' : ' ',
          member(t, "name").get<std::string>(), u64(t, "transactions"),
          report::format_count(number(t, "transactions_per_s")),
          report::format_bytes(u64(t, "bytes")), report::format_bits_per_s(number(t, "bits_per_s")),
          report::format_ns(u64(l, "p50")), report::format_ns(u64(l, "p99")),
          report::format_ns(u64(l, "p99_9")), u64(member(t, "errors"), "total"));
    }
  }
  const json& totals = member(merged, "totals");
  out += fmt::format("\nTotals, all masters, timed steps\n");
  out += fmt::format("  transactions  {:>14}  {:>9} txn/s\n", u64(totals, "transactions"),
                     report::format_count(number(totals, "transactions_per_s")));
  out += fmt::format("  operations    {:>14}  {:>9} op/s\n", u64(totals, "ops"),
                     report::format_count(number(totals, "ops_per_s")));
  out += fmt::format("  data          {:>14}  {:>9}\n", report::format_bytes(u64(totals, "bytes")),
                     report::format_bits_per_s(number(totals, "bits_per_s")));
  out += fmt::format("  errors {}\n", u64(member(totals, "errors"), "total"));
  out +=
      "CPU, NIC and kernel counters stay per host: see \"cpu\", \"nic\" and \"kernel\" in the\n"
      "merged document (--json).\n";
  return out;
}

}  // namespace volley::analysis
