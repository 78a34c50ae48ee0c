#include "volley/analysis/merge.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "volley/core/build_info.hpp"
#include "volley/report/json_report.hpp"
#include "volley/report/units_format.hpp"
#include "volley/stats/latency_histogram.hpp"

namespace volley::analysis {
namespace {

using nlohmann::json;
using Docs = std::vector<const json*>;

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

/// The same member of every document.
Docs members(const Docs& docs, const char* key) {
  Docs out;
  for (const json* d : docs) out.push_back(&member(*d, key));
  return out;
}

/// Element `i` of the same array member of every document.
Docs elements(const Docs& docs, const char* key, std::size_t i) {
  Docs out;
  for (const json* d : docs) out.push_back(&member(*d, key).at(i));
  return out;
}

void add_counts(json& out, const Docs& docs, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    std::uint64_t sum = 0;
    for (const json* d : docs) sum += u64(*d, key);
    out[key] = sum;
  }
}

/// Each master's rate over its own window, added up: the rate all of them produced together.
void add_rates(json& out, const Docs& docs, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    double sum = 0;
    for (const json* d : docs) sum += number(*d, key);
    out[key] = sum;
  }
}

/// {kind: n, ..., total}: every kind any document has, added up.
json add_errors(const Docs& docs) {
  json out = json::object();
  for (const json* d : docs) {
    const json& errors = member(*d, "errors");
    if (!errors.is_object()) continue;
    for (const auto& [kind, n] : errors.items()) {
      if (!n.is_number_unsigned()) continue;
      out[kind] = (out.contains(kind) ? out[kind].get<std::uint64_t>() : 0) + n.get<std::uint64_t>();
    }
  }
  if (!out.contains("total")) out["total"] = 0;
  return out;
}

/// The latency object of the histogram all documents' histograms add up to.
std::optional<json> merge_latency(const Docs& latencies, std::string& error) {
  stats::LatencyHistogram merged;
  for (const json* l : latencies) {
    const auto h = stats::histogram_from_json(member(*l, "histogram"));
    if (!h) {
      error = "a latency has no valid histogram";
      return std::nullopt;
    }
    merged.merge(*h);
  }
  return report::latency_json(merged);
}

std::optional<json> merge_flowop(const Docs& flowops, std::string& error) {
  json out = json{{"type", member(*flowops.front(), "type")}};
  add_counts(out, flowops, {"ops", "bytes", "bytes_read", "bytes_written"});
  out["errors"] = add_errors(flowops);
  add_counts(out, flowops, {"expired"});
  add_rates(out, flowops, {"ops_per_s", "bytes_per_s"});
  auto latency = merge_latency(members(flowops, "latency_ns"), error);
  if (!latency) return std::nullopt;
  out["latency_ns"] = std::move(*latency);
  return out;
}

std::optional<json> merge_transaction(const Docs& txns, std::string& error) {
  json out = json{{"name", member(*txns.front(), "name")}, {"step", member(*txns.front(), "step")}};
  std::optional<std::int64_t> start;
  double elapsed = 0;
  for (const json* t : txns) {
    const json& s = member(*t, "start_unix_ns");
    if (s.is_number_integer()) start = std::min(start.value_or(s.get<std::int64_t>()), s.get<std::int64_t>());
    elapsed = std::max(elapsed, number(*t, "elapsed_s"));
  }
  out["start_unix_ns"] = start ? json(*start) : json(nullptr);
  out["elapsed_s"] = elapsed;
  add_counts(out, txns, {"transactions"});
  add_rates(out, txns, {"transactions_per_s"});
  add_counts(out, txns, {"ops", "bytes"});
  add_rates(out, txns, {"bytes_per_s", "bits_per_s"});
  out["errors"] = add_errors(txns);
  add_counts(out, txns, {"expired"});
  auto latency = merge_latency(members(txns, "latency_ns"), error);
  if (!latency) return std::nullopt;
  out["latency_ns"] = std::move(*latency);
  if (txns.front()->contains("latency_uncorrected_ns")) {
    auto uncorrected = merge_latency(members(txns, "latency_uncorrected_ns"), error);
    if (!uncorrected) return std::nullopt;
    out["latency_uncorrected_ns"] = std::move(*uncorrected);
  }
  json flowops = json::array();
  for (std::size_t f = 0; f < member(*txns.front(), "flowops").size(); ++f) {
    auto merged = merge_flowop(elements(txns, "flowops", f), error);
    if (!merged) return std::nullopt;
    flowops.push_back(std::move(*merged));
  }
  out["flowops"] = std::move(flowops);
  return out;
}

std::optional<json> merge_groups(const Docs& docs, std::string& error) {
  json groups = json::array();
  for (std::size_t g = 0; g < member(*docs.front(), "groups").size(); ++g) {
    const Docs group = elements(docs, "groups", g);
    std::uint64_t strands = 0;
    for (const json* d : group) strands += u64(*d, "strands");
    json txns = json::array();
    for (std::size_t t = 0; t < member(*group.front(), "transactions").size(); ++t) {
      auto merged = merge_transaction(elements(group, "transactions", t), error);
      if (!merged) return std::nullopt;
      txns.push_back(std::move(*merged));
    }
    groups.push_back(
        json{{"name", member(*group.front(), "name")}, {"strands", strands}, {"transactions", txns}});
  }
  return groups;
}

json merge_totals(const Docs& totals, double overlap_seconds) {
  json out = json::object();
  add_counts(out, totals, {"transactions"});
  add_rates(out, totals, {"transactions_per_s"});
  add_counts(out, totals, {"ops"});
  add_rates(out, totals, {"ops_per_s"});
  add_counts(out, totals, {"bytes"});
  add_rates(out, totals, {"bytes_per_s", "bits_per_s"});
  out["seconds"] = overlap_seconds;
  add_counts(out, totals, {"connections_requested", "connections_established"});
  out["errors"] = add_errors(totals);
  add_counts(out, totals, {"expired"});
  return out;
}

/// Why `a` and `b` did not run the same profile shape (groups, transactions, flowops, timed
/// steps); empty when they did.
std::string shape_difference(const json& a, const json& b) {
  if (member(a, "timed_steps") != member(b, "timed_steps")) return "the timed steps differ";
  const json& ga = member(a, "groups");
  const json& gb = member(b, "groups");
  if (ga.size() != gb.size()) return fmt::format("{} groups against {}", ga.size(), gb.size());
  for (std::size_t g = 0; g < ga.size(); ++g) {
    const json& ta = member(ga[g], "transactions");
    const json& tb = member(gb[g], "transactions");
    if (member(ga[g], "name") != member(gb[g], "name") || ta.size() != tb.size()) {
      return fmt::format("group {} differs", g);
    }
    for (std::size_t t = 0; t < ta.size(); ++t) {
      const json& fa = member(ta[t], "flowops");
      const json& fb = member(tb[t], "flowops");
      bool same = member(ta[t], "name") == member(tb[t], "name") && fa.size() == fb.size();
      for (std::size_t f = 0; same && f < fa.size(); ++f) {
        same = member(fa[f], "type") == member(fb[f], "type");
      }
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

/// The wall-clock span of a document's timed steps: from the first one's release to the end of
/// the last one's window.
std::optional<Window> timed_window(const json& doc) {
  std::optional<Window> w;
  for (const json& step : member(doc, "timed_steps")) {
    if (!step.is_number_unsigned()) continue;
    for (const json& group : member(doc, "groups")) {
      const json& txns = member(group, "transactions");
      const std::size_t i = step.get<std::size_t>();
      if (!txns.is_array() || i >= txns.size()) continue;
      const json& start = member(txns[i], "start_unix_ns");
      if (!start.is_number_integer()) continue;
      const std::int64_t s = start.get<std::int64_t>();
      const auto e = s + static_cast<std::int64_t>(number(txns[i], "elapsed_s") * 1e9);
      if (!w) w = Window{s, e};
      w->start_ns = std::min(w->start_ns, s);
      w->end_ns = std::max(w->end_ns, e);
    }
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

/// Why `doc` cannot be merged at all; empty when it can.
std::string unmergeable(const json& doc) {
  if (!doc.is_object() || !member(doc, "groups").is_array() || !member(doc, "totals").is_object() ||
      !member(doc, "timed_steps").is_array()) {
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
  std::vector<Window> windows;
  for (const MergeSource& s : sources) {
    if (auto why = unmergeable(s.document); !why.empty()) {
      outcome.error = fmt::format("{} {}", s.name, why);
      return outcome;
    }
    if (auto diff = shape_difference(sources.front().document, s.document); !diff.empty()) {
      outcome.error = fmt::format("{} and {} did not run the same profile: {}",
                                  sources.front().name, s.name, diff);
      return outcome;
    }
    const auto w = timed_window(s.document);
    if (!w) {
      outcome.error = fmt::format("{} has no start times for its timed steps (written by a volley "
                                  "older than 'volley merge', or the timed part never ran)",
                                  s.name);
      return outcome;
    }
    windows.push_back(*w);
  }
  Window overlap{std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()};
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

  Docs docs;
  for (const MergeSource& s : sources) docs.push_back(&s.document);
  std::string error;
  auto groups = merge_groups(docs, error);
  if (!groups) {
    outcome.error = fmt::format("cannot merge the latencies: {} (every document needs the "
                                "histograms a volley with 'volley merge' writes)", error);
    return outcome;
  }

  std::string status = "ok";
  std::vector<std::string> failures;
  json source_list = json::array();
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const json& d = sources[i].document;
    const std::string st = member(d, "status").is_string() ? member(d, "status").get<std::string>() : "unknown";
    if (st != "ok") {
      status = (status == "failed" || st == "failed" || st == "unknown") ? "failed" : st;
      failures.push_back(fmt::format("{}: {} ({})", sources[i].name, st,
                                     member(d, "failure").is_string() ? member(d, "failure").get<std::string>() : "no reason given"));
    }
    json window = window_json(windows[i]);
    window["overlap_pct"] = windows[i].seconds() > 0 ? 100.0 * overlap.seconds() / windows[i].seconds() : 0.0;
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
    outcome.warning = fmt::format("not every master's run succeeded: {}", fmt::join(failures, "; "));
  }

  const json& first = sources.front().document;
  json doc;
  doc["schema_version"] = 1;
  doc["kind"] = "merge";
  doc["volley_version"] = std::string(core::version());
  doc["status"] = status;
  doc["failure"] = failures.empty() ? json(nullptr) : json(fmt::format("{}", fmt::join(failures, "; ")));
  doc["profile"] = json{{"name", member(member(first, "profile"), "name")},
                        {"sha256", member(member(first, "profile"), "sha256")}};
  doc["masters"] = sources.size();
  doc["window"] = window_json(overlap);
  doc["timed_steps"] = member(first, "timed_steps");
  doc["groups"] = std::move(*groups);
  doc["totals"] = merge_totals(members(docs, "totals"), overlap.seconds());
  doc["sources"] = std::move(source_list);
  doc["cpu"] = per_host(sources, "cpu");
  doc["nic"] = per_host(sources, "nic");
  doc["kernel"] = per_host(sources, "kernel");
  outcome.document = std::move(doc);
  return outcome;
}

std::string format_merged(const json& merged) {
  const json& window = member(merged, "window");
  std::string out = fmt::format(
      "volley merge: {} masters, status {}\n  timed parts overlap {:.3f}s, {} to {}\n",
      u64(merged, "masters"), member(merged, "status").get<std::string>(), number(window, "seconds"),
      member(window, "start_time").get<std::string>(), member(window, "end_time").get<std::string>());
  for (const json& s : member(merged, "sources")) {
    const json& w = member(s, "timed_window");
    const json& start_at = member(s, "start_at");
    const json& offset = member(start_at, "offset_ns");
    out += fmt::format("  {}: {} txn, {} txn/s over {:.3f}s ({:.1f}% in the overlap){}\n",
                       member(s, "file").get<std::string>(), u64(member(s, "totals"), "transactions"),
                       report::format_count(number(member(s, "totals"), "transactions_per_s")),
                       number(w, "seconds"), number(w, "overlap_pct"),
                       offset.is_number() ? fmt::format(", started {:+.3f} ms from --start-at",
                                                        offset.get<double>() / 1e6)
                                          : std::string());
  }
  out += "\nTransactions, all masters (* = timed step; rates are the masters' rates added up)\n";
  out += fmt::format("{:<12}{:>12} {:>8} {:>9} {:>10} {:>7} {:>7} {:>7} {:>6}\n", "", "Iterations",
                     "Txn/s", "Bytes", "Bits/s", "p50", "p99", "p99.9", "Errors");
  const json& timed = member(merged, "timed_steps");
  for (const json& g : member(merged, "groups")) {
    out += fmt::format("{} ({} strands)\n", member(g, "name").get<std::string>(), u64(g, "strands"));
    for (const json& t : member(g, "transactions")) {
      const bool is_timed = std::find(timed.begin(), timed.end(), member(t, "step")) != timed.end();
      const json& l = member(t, "latency_ns");
      out += fmt::format("{}{:<11}{:>12} {:>8} {:>9} {:>10} {:>7} {:>7} {:>7} {:>6}\n",
                         is_timed ? '*' : ' ', member(t, "name").get<std::string>(),
                         u64(t, "transactions"), report::format_count(number(t, "transactions_per_s")),
                         report::format_bytes(u64(t, "bytes")),
                         report::format_bits_per_s(number(t, "bits_per_s")),
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
  out += "CPU, NIC and kernel counters stay per host: see \"cpu\", \"nic\" and \"kernel\" in the\n"
         "merged document (--json).\n";
  return out;
}

}  // namespace volley::analysis
