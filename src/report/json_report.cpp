#include "volley/report/json_report.hpp"

#include "volley/report/bottleneck.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <ostream>

#include "volley/report/comparison.hpp"
#include "volley/report/interval_rows.hpp"
#include "volley/report/service_demand.hpp"
#include "volley/report/tcp_figures.hpp"
#include "volley/results/result_json.hpp"

namespace volley::report {
namespace {

using nlohmann::json;

double per_s(double n, double seconds) { return seconds > 0 ? n / seconds : 0; }
double per_s(std::uint64_t n, double seconds) { return per_s(static_cast<double>(n), seconds); }

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json string_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

/// The figures a `latency_ns` object shows beside its histogram (results::to_json's form).
void add_latency_figures(json& latency, const stats::LatencyHistogram& h) {
  latency["count"] = h.count();
  latency["min"] = h.min();
  latency["mean"] = h.mean();
  latency["stddev"] = h.stddev();
  latency["p50"] = h.percentile(50);
  latency["p90"] = h.percentile(90);
  latency["p99"] = h.percentile(99);
  latency["p99_9"] = h.percentile(99.9);
  latency["p99_99"] = h.percentile(99.99);
  latency["max"] = h.max();
}

/// Every kind (stable keys for wrappers), plus "total".
json full_errors_json(const std::array<std::uint64_t, results::kErrorKindCount>& errors,
                      std::uint64_t total) {
  json j = json{{"total", total}};
  for (std::size_t k = 0; k < results::kErrorKindCount; ++k) {
    j[std::string(results::to_string(static_cast<results::ErrorKind>(k)))] = errors[k];
  }
  return j;
}

void add_flowop_figures(json& j, const results::FlowopResult& f, double seconds) {
  const results::SlotCounters& c = f.stats.counters;
  j["bytes"] = c.bytes();
  j["ops_per_s"] = per_s(c.ops, seconds);
  j["bytes_per_s"] = per_s(c.bytes(), seconds);
  add_latency_figures(j["latency_ns"], f.stats.latency);
  if (const results::ZeroCopyCounters& z = c.zerocopy; z.any()) {
    const std::uint64_t reported = z.zero_copied + z.copied;
    j["zerocopy"]["copied_pct"] =
        reported == 0 ? json(nullptr)
                      : json(100.0 * static_cast<double>(z.copied) / static_cast<double>(reported));
  }
  if (f.handshakes) {
    for (const auto& [key, part] :
         {std::pair{"full", &f.handshakes->full}, std::pair{"resumed", &f.handshakes->resumed}}) {
      json& h = j["handshakes"][key];
      h["ops_per_s"] = per_s(part->counters.ops, seconds);
      add_latency_figures(h["latency_ns"], part->latency);
    }
  }
}

/// A transaction's figures: its step and window, its iterations, its flowops' operations, bytes,
/// errors and expired added up, their rates, and the latency percentiles.
void add_transaction_figures(json& j, const results::TxnResult& t, std::size_t step, double seconds,
                             std::int64_t start_unix_ns) {
  const results::SlotCounters ops = flowop_counters(t);
  j["step"] = step;
  j["start_unix_ns"] = start_unix_ns != 0 ? json(start_unix_ns) : json(nullptr);
  j["elapsed_s"] = seconds;
  j["transactions"] = t.stats.counters.ops;
  j["transactions_per_s"] = per_s(t.stats.counters.ops, seconds);
  j["ops"] = ops.ops;
  j["bytes"] = ops.bytes();
  j["bytes_per_s"] = per_s(ops.bytes(), seconds);
  j["bits_per_s"] = 8.0 * per_s(ops.bytes(), seconds);
  j["errors"] = results::errors_to_json(ops);
  j["expired"] = ops.expired;
  add_latency_figures(j["latency_ns"], t.stats.latency);
  if (t.uncorrected_latency) {
    add_latency_figures(j["latency_uncorrected_ns"], *t.uncorrected_latency);
  }
  if (!t.stats.tcp.empty()) add_tcp_figures(j["tcp"], t.stats.tcp);
  if (const std::uint64_t scheduled = t.stats.counters.scheduled; scheduled != 0) {
    j["schedule"] = json{{"scheduled", scheduled},
                         {"done", t.stats.counters.ops},
                         {"done_pct", 100.0 * static_cast<double>(t.stats.counters.ops) /
                                          static_cast<double>(scheduled)}};
  }
  for (std::size_t f = 0; f < t.flowops.size(); ++f) {
    add_flowop_figures(j["flowops"][f], t.flowops[f], seconds);
  }
}

/// `processes`: the side's process records in their JSON form.
json totals_json(const Totals& t, const results::RunResult& result, const json& processes) {
  json out{{"transactions", t.transactions},
           {"transactions_per_s", t.transactions_per_s()},
           {"ops", t.ops},
           {"ops_per_s", t.ops_per_s()},
           {"bytes", t.bytes},
           {"bytes_per_s", per_s(t.bytes, t.seconds)},
           {"bits_per_s", t.bits_per_s()},
           {"seconds", t.seconds},
           {"connections_requested", result.connections_requested},
           {"connections_established", result.connections_established},
           {"errors", full_errors_json(t.errors, t.error_total())},
           {"expired", t.expired},
           {"memory_per_connection_bytes", results::memory_per_connection(result)},
           {"processes", processes}};
  if (t.handshakes != 0) {
    out["tls_handshakes"] = json{{"handshakes", t.handshakes},
                                 {"handshakes_per_s", per_s(t.handshakes, t.seconds)},
                                 {"resumed", t.resumed}};
  }
  return out;
}

}  // namespace

json side_json(const results::RunResult& result, const std::vector<std::size_t>& timed_steps,
               const std::vector<SlotName>* names) {
  json side = results::to_json(result);
  for (std::size_t gi = 0; gi < result.groups.size(); ++gi) {
    const auto& g = result.groups[gi];
    json& txns = side["groups"][gi]["transactions"];
    for (std::size_t step = 0; step < g.transactions.size(); ++step) {
      const std::int64_t start =
          step < result.windows.size() ? result.windows[step].start_unix_ns : 0;
      add_transaction_figures(txns[step], g.transactions[step], step, window_seconds(result, step),
                              start);
      if (names == nullptr) continue;
      json& flowops = txns[step]["flowops"];
      for (const SlotName& n : *names) {
        if (n.flowop && !n.uncorrected && !n.handshake && n.group == gi && n.txn == step &&
            *n.flowop < flowops.size()) {
          flowops[*n.flowop]["host"] = n.host;
        }
      }
    }
  }
  side["totals"] = totals_json(timed_totals(result, timed_steps), result, side.at("processes"));
  return side;
}

namespace {

json comparison_json(const RunReport& report) {
  json out = json::array();
  for (std::size_t s = 0; s < report.slaves.size(); ++s) {
    const SideComparison c = compare_with_master(report, s);
    const bool missing = !c.missing.empty();
    const auto when_present = [&](std::uint64_t v) { return missing ? json(nullptr) : json(v); };
    out.push_back(json{{"host", c.host},
                       {"missing", string_or_null(c.missing)},
                       {"master_bytes", c.master.bytes},
                       {"slave_bytes", when_present(c.slave.bytes)},
                       {"bytes_difference_pct", optional_number(c.bytes_difference_pct)},
                       {"master_bytes_written", c.master.bytes_written},
                       {"slave_bytes_read", when_present(c.slave.bytes_read)},
                       {"master_bytes_read", c.master.bytes_read},
                       {"slave_bytes_written", when_present(c.slave.bytes_written)},
                       {"master_ops", c.master.ops},
                       {"slave_ops", when_present(c.slave.ops)},
                       {"ops_difference_pct", optional_number(c.ops_difference_pct)}});
  }
  return out;
}

json comparison_sum_json(const RunReport& report) {
  const SideComparison c = compare_master_with_slaves(report);
  const bool missing = !c.missing.empty();
  const auto when_present = [&](std::uint64_t v) { return missing ? json(nullptr) : json(v); };
  return json{{"missing", string_or_null(c.missing)},
              {"master_bytes", c.master.bytes},
              {"slaves_bytes", when_present(c.slave.bytes)},
              {"bytes_difference_pct", optional_number(c.bytes_difference_pct)},
              {"master_ops", c.master.ops},
              {"slaves_ops", when_present(c.slave.ops)},
              {"ops_difference_pct", optional_number(c.ops_difference_pct)}};
}

json cpu_side_json(const SideReport& side, const Totals& master_timed) {
  if (!side.cpu) return nullptr;
  json j = *side.cpu;
  j["host"] = side.host;
  const ServiceDemand d = service_demand(*side.cpu, master_timed);
  j["service_demand"] =
      json{{"process_us_per_transaction", optional_number(d.process_us_per_transaction)},
           {"system_us_per_transaction", optional_number(d.system_us_per_transaction)},
           {"process_us_per_kb", optional_number(d.process_us_per_kb)},
           {"system_us_per_kb", optional_number(d.system_us_per_kb)}};
  return j;
}

json nic_side_json(const SideReport& side) {
  if (!side.nic) return nullptr;
  json j = *side.nic;
  j["host"] = side.host;
  return j;
}

json kernel_side_json(const SideReport& side) {
  if (!side.kernel) return nullptr;
  json j = *side.kernel;
  j["host"] = side.host;
  return j;
}

/// An interval's datagram counters: `lost` is the interval's (interval_lost: signed, so the
/// intervals add up to the run).
json interval_datagrams_json(const results::DatagramCounters& d) {
  json j = results::datagrams_to_json(d);
  j["lost"] = interval_lost(d);
  return j;
}

/// A transaction's UDP in one interval: the master's side, the slaves' side, and both per
/// direction (what the sender sent beside what the receiver counted).
void add_interval_datagrams(const IntervalTxnRow& row, json& txn) {
  if (row.datagrams.any()) txn["datagrams"] = interval_datagrams_json(row.datagrams);
  if (row.peers.complete() && row.peer_datagrams.any()) {
    txn["slave_datagrams"] = interval_datagrams_json(row.peer_datagrams);
  }
  json ways = json::array();
  for (const DatagramWay& w : datagram_ways(row)) {
    json j{{"way", w.way()}, {"sent", w.sent ? json(*w.sent) : json(nullptr)}};
    if (w.receiver) {
      const results::DatagramCounters& r = *w.receiver;
      j["received"] = r.received;
      j["gaps"] = r.lost;
      j["late"] = r.late;
      j["lost"] = interval_lost(r);
      j["loss_pct"] = interval_loss_pct(r);
      j["duplicates"] = r.duplicates;
      j["timeouts"] = r.timeouts;
      j["jitter_ns"] = r.jitter_ns;
    } else {
      j["receiver_missing"] = w.missing;
    }
    ways.push_back(std::move(j));
  }
  if (!ways.empty()) txn["udp"] = std::move(ways);
}

json intervals_json(const RunReport& report) {
  json out = json::array();
  for (const IntervalSample& sample : report.intervals) {
    json txns = json::array();
    for (const IntervalTxnRow& row : interval_txn_rows(report, sample)) {
      txns.push_back(
          json{{"name", row.name},
               {"transactions", row.transactions},
               {"transactions_per_s", row.per_s(row.transactions)},
               {"ops", row.ops},
               {"ops_per_s", row.per_s(row.ops)},
               {"bytes", row.bytes},
               {"bits_per_s", 8.0 * row.per_s(row.bytes)},
               {"errors", row.errors},
               {"latency_ns", json{{"p50", row.latency.p50_ns}, {"p99", row.latency.p99_ns}}}});
      if (row.handshakes != 0) {
        txns.back()["handshakes"] = row.handshakes;
        txns.back()["handshakes_per_s"] = row.per_s(row.handshakes);
        txns.back()["resumed"] = row.resumed;
      }
      add_interval_datagrams(row, txns.back());
      if (row.tcp) txns.back()["tcp"] = tcp_brief_json(*row.tcp);
      if (row.peers.complete() && row.peer_tcp)
        txns.back()["slave_tcp"] = tcp_brief_json(*row.peer_tcp);
    }
    out.push_back(json{{"start_unix_ns", sample.start_unix_ns},
                       {"t_s", std::chrono::duration<double>(sample.since_run_start).count()},
                       {"length_s", std::chrono::duration<double>(sample.length).count()},
                       {"step", sample.step},
                       {"transactions", std::move(txns)}});
    if (!sample.kernel.empty()) {
      json hosts = json::array();
      for (const HostCounters& h : sample.kernel) {
        json moved = json::object();
        for (const auto& [name, value] : h.moved) moved[name] = value;
        hosts.push_back(json{{"host", h.host}, {"moved", std::move(moved)}});
      }
      out.back()["kernel"] = std::move(hosts);
    }
    if (sample.peers.asked > 0) {
      out.back()["slave_counts"] = json{{"asked", sample.peers.asked},
                                        {"answered", sample.peers.answered},
                                        {"missing", string_or_null(sample.peers.missing)}};
    }
  }
  return out;
}

/// --start-at: the requested time and how far from it the first timed step was released.
json start_at_json(const RunReport& report) {
  if (!report.start_at_unix_ns) return nullptr;
  const auto started = timed_start_unix_ns(report);
  const auto offset = start_offset_ns(report);
  return json{{"requested", iso8601_utc_ms(*report.start_at_unix_ns)},
              {"requested_unix_ns", *report.start_at_unix_ns},
              {"actual_unix_ns", started ? json(*started) : json(nullptr)},
              {"offset_ns", offset ? json(*offset) : json(nullptr)}};
}

}  // namespace

std::string iso8601_utc_ms(std::int64_t unix_ns) {
  using namespace std::chrono;
  const sys_time<nanoseconds> t{nanoseconds{unix_ns}};
  const auto day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss<milliseconds> time{floor<milliseconds>(t - day)};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                     time.hours().count(), time.minutes().count(), time.seconds().count(),
                     time.subseconds().count());
}

json to_json_document(const RunReport& report) {
  const Totals master_timed = timed_totals(report.master.result, report.timed_steps);
  json doc;
  doc["schema_version"] = kJsonSchemaVersion;
  doc["volley_version"] = report.volley_version;
  doc["status"] = std::string(to_string(report.status));
  doc["failure"] = string_or_null(report.failure);
  json variables = json::object();
  for (const auto& [k, v] : report.variables) variables[k] = v;
  doc["profile"] = json{{"name", string_or_null(report.profile_name)},
                        {"path", string_or_null(report.profile_path)},
                        {"sha256", string_or_null(report.profile_sha256)},
                        {"variables", std::move(variables)}};
  doc["command_line"] = report.command_line;
  doc["seed"] = report.seed;
  doc["workers"] = report.workers;
  doc["io"] = string_or_null(report.master.io);
  doc["start_time"] =
      report.start_unix_ns != 0 ? json(iso8601_utc_ms(report.start_unix_ns)) : json(nullptr);
  doc["start_unix_ns"] = report.start_unix_ns != 0 ? json(report.start_unix_ns) : json(nullptr);
  doc["duration_s"] = std::chrono::duration<double>(report.duration).count();
  doc["timed_steps"] = report.timed_steps;
  doc["start_at"] = start_at_json(report);
  doc.update(side_json(report.master.result, report.timed_steps, &report.slot_names));
  json slaves = json::array();
  json cpu_remote = json::array();
  json nic_remote = json::array();
  json kernel_remote = json::array();
  for (const SideReport& s : report.slaves) {
    // A slave without results is missing, never a row of zeros.
    json side;
    if (s.missing.empty()) {
      side = side_json(s.result, report.timed_steps);
      side["missing"] = nullptr;
    } else {
      side = results::to_json(results::RunResult{});
      for (const char* count :
           {"connections_requested", "connections_established", "failed_strands"}) {
        side[count] = nullptr;
      }
      side["missing"] = s.missing;
      side["totals"] = nullptr;
    }
    side["host"] = s.host;
    side["io"] = string_or_null(s.io);
    slaves.push_back(std::move(side));
    cpu_remote.push_back(cpu_side_json(s, master_timed));
    nic_remote.push_back(nic_side_json(s));
    kernel_remote.push_back(kernel_side_json(s));
  }
  doc["slaves"] = std::move(slaves);
  doc["comparison"] = comparison_json(report);
  doc["comparison_sum"] = comparison_sum_json(report);
  doc["cpu"] = json{{"local", cpu_side_json(report.master, master_timed)},
                    {"remote", std::move(cpu_remote)}};
  doc["nic"] = json{{"local", nic_side_json(report.master)}, {"remote", std::move(nic_remote)}};
  doc["kernel"] =
      json{{"local", kernel_side_json(report.master)}, {"remote", std::move(kernel_remote)}};
  json bottlenecks = json::array();
  for (const Bottleneck& b : find_bottlenecks(report)) {
    bottlenecks.push_back({{"rule", to_string(b.rule)},
                           {"host", b.host},
                           {"evidence", b.evidence},
                           {"advice", b.advice}});
  }
  doc["bottlenecks"] = std::move(bottlenecks);
  nlohmann::json system_remote = nlohmann::json::array();
  for (const auto& s : report.slaves) system_remote.push_back(s.system);
  doc["system"] =
      nlohmann::json{{"local", report.master.system}, {"remote", std::move(system_remote)}};
  doc["intervals"] = intervals_json(report);
  return doc;
}

void write_json_document(const RunReport& report, std::ostream& out) {
  write_pretty_json(to_json_document(report), out);
}

void write_pretty_json(const nlohmann::json& j, std::ostream& out) {
  // Invalid UTF-8 (a name from a hand-edited profile) is replaced rather than thrown on.
  const auto compact = [](const json& v) {
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
  };
  const auto scalar = [](const json& v) { return !v.is_structured(); };
  // An array of scalars, or of arrays of scalars (histogram buckets), fits on one line; dump(2)
  // would spend four lines per bucket and make documents six times larger.
  const auto one_line = [&](const json& v) {
    return std::all_of(v.begin(), v.end(), [&](const json& e) {
      return scalar(e) || (e.is_array() && std::all_of(e.begin(), e.end(), scalar));
    });
  };
  std::function<void(const json&, std::size_t)> write = [&](const json& v, std::size_t depth) {
    const bool object = v.is_object();
    if (v.empty() || !v.is_structured() || (!object && one_line(v))) {
      out << compact(v);
      return;
    }
    const std::string inner(2 * (depth + 1), ' ');
    out << (object ? "{\n" : "[\n");
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      out << (first ? "" : ",\n") << inner;
      first = false;
      if (object) out << compact(json(it.key())) << ": ";
      write(*it, depth + 1);
    }
    out << '\n' << std::string(2 * depth, ' ') << (object ? '}' : ']');
  };
  write(j, 0);
  out << '\n';
}

}  // namespace volley::report
