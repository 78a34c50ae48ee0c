#include "volley/results/result_json.hpp"

#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "volley/core/printable.hpp"

namespace volley::results {
namespace {

using nlohmann::json;

// ---- writing ---------------------------------------------------------------------------------

void put_counters(json& j, const SlotCounters& c) {
  j["ops"] = c.ops;
  j["bytes_read"] = c.bytes_read;
  j["bytes_written"] = c.bytes_written;
  j["expired"] = c.expired;
  j["errors"] = errors_to_json(c);
  if (c.datagrams.any()) j["datagrams"] = datagrams_to_json(c.datagrams);
  if (c.zerocopy.any()) j["zerocopy"] = zerocopy_to_json(c.zerocopy);
  if (c.scheduled != 0) j["scheduled"] = c.scheduled;
}

json latency_to_json(const stats::LatencyHistogram& h) { return json{{"histogram", h}}; }

json handshake_part_to_json(const SlotStats& s) {
  json j{{"ops", s.counters.ops}, {"latency_ns", latency_to_json(s.latency)}};
  if (!s.tls.empty()) j["negotiated"] = s.tls;
  return j;
}

json flowop_to_json(const FlowopResult& f) {
  json j{{"type", f.type}, {"latency_ns", latency_to_json(f.stats.latency)}};
  put_counters(j, f.stats.counters);
  if (!f.stats.tcp.empty()) j["tcp"] = f.stats.tcp;
  if (f.handshakes) {
    j["handshakes"] = json{{"full", handshake_part_to_json(f.handshakes->full)},
                           {"resumed", handshake_part_to_json(f.handshakes->resumed)}};
  }
  return j;
}

json transaction_to_json(const TxnResult& t) {
  json counters = json::object();
  put_counters(counters, t.stats.counters);
  json flowops = json::array();
  for (const auto& f : t.flowops) flowops.push_back(flowop_to_json(f));
  json j{{"name", t.name},
         {"counters", std::move(counters)},
         {"latency_ns", latency_to_json(t.stats.latency)},
         {"flowops", std::move(flowops)}};
  if (t.uncorrected_latency) j["latency_uncorrected_ns"] = latency_to_json(*t.uncorrected_latency);
  if (!t.stats.tcp.empty()) j["tcp"] = t.stats.tcp;
  return j;
}

json group_to_json(const GroupResult& g) {
  json txns = json::array();
  for (const auto& t : g.transactions) txns.push_back(transaction_to_json(t));
  json j{{"name", g.name}, {"strands", g.strands}, {"transactions", std::move(txns)}};
  if (g.strand_counts.empty()) return j;
  json counts = json::array();
  for (const StrandCounts& c : g.strand_counts) {
    counts.push_back({{"ops", c.ops}, {"bytes", c.bytes}, {"transactions", c.transactions}});
  }
  j["strand_counts"] = std::move(counts);
  return j;
}

json process_to_json(const ProcessRecord& p) {
  return json{{"name", p.name},
              {"pid", p.pid},
              {"strands", p.strands},
              {"connections", p.connections},
              {"rss_growth_bytes", p.rss_growth_bytes},
              {"cpu_user_s", p.cpu_user_s},
              {"cpu_sys_s", p.cpu_sys_s}};
}

// ---- reading ---------------------------------------------------------------------------------
// Each reader takes the object that holds the value and the object's path (a JSON pointer), so
// that what is wrong is named where it is. A failure unwinds to run_result_from_json as
// Malformed, which it turns into its error value.

struct Malformed {
  std::string message;
};

std::string child(const std::string& path, std::string_view key) {
  return fmt::format("{}/{}", path, core::printable(key, 40));
}
std::string child(const std::string& path, std::size_t index) {
  return fmt::format("{}/{}", path, index);
}

[[noreturn]] void fail(const std::string& path, std::string_view what) {
  throw Malformed{fmt::format("{}: {}", path.empty() ? "/" : path, what)};
}

std::string shown(const json& v) {
  return core::printable(v.dump(-1, ' ', false, json::error_handler_t::replace), 40);
}

void expect_object(const json& j, const std::string& path) {
  if (!j.is_object()) fail(path, fmt::format("expected an object, got {}", shown(j)));
}

const json& member(const json& obj, const std::string& path, std::string_view key) {
  expect_object(obj, path);
  const auto it = obj.find(key);
  if (it == obj.end()) fail(child(path, key), "missing");
  return *it;
}

std::uint64_t read_uint(const json& obj, const std::string& path, std::string_view key) {
  const json& v = member(obj, path, key);
  if (!v.is_number_unsigned()) {
    fail(child(path, key), fmt::format("expected an integer from 0 to 2^64-1, got {}", shown(v)));
  }
  return v.get<std::uint64_t>();
}

std::int64_t read_int(const json& obj, const std::string& path, std::string_view key) {
  const json& v = member(obj, path, key);
  const bool fits = v.is_number_unsigned()
                        ? v.get<std::uint64_t>() <=
                              static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                        : v.is_number_integer();
  if (!fits) fail(child(path, key), fmt::format("expected a 64-bit integer, got {}", shown(v)));
  return v.get<std::int64_t>();
}

double read_number(const json& obj, const std::string& path, std::string_view key) {
  const json& v = member(obj, path, key);
  if (!v.is_number()) fail(child(path, key), fmt::format("expected a number, got {}", shown(v)));
  return v.get<double>();
}

bool read_bool(const json& obj, const std::string& path, std::string_view key) {
  const json& v = member(obj, path, key);
  if (!v.is_boolean()) {
    fail(child(path, key), fmt::format("expected true or false, got {}", shown(v)));
  }
  return v.get<bool>();
}

std::string read_string(const json& obj, const std::string& path, std::string_view key) {
  const json& v = member(obj, path, key);
  if (!v.is_string()) fail(child(path, key), fmt::format("expected a string, got {}", shown(v)));
  return v.get<std::string>();
}

const json& read_array(const json& obj, const std::string& path, std::string_view key) {
  const json& v = member(obj, path, key);
  if (!v.is_array()) fail(child(path, key), fmt::format("expected an array, got {}", shown(v)));
  return v;
}

/// `key` holds {histogram, ...}: the histogram is read, the figures beside it are not.
stats::LatencyHistogram read_latency(const json& obj, const std::string& path,
                                     std::string_view key) {
  const std::string at = child(path, key);
  auto h = stats::histogram_from_json(member(member(obj, path, key), at, "histogram"));
  if (!h) fail(child(at, "histogram"), "not a valid latency histogram");
  return std::move(*h);
}

/// The TCP summary at "tcp" of `obj`; empty when there is none.
stats::TcpSummary read_tcp(const json& obj, const std::string& path) {
  stats::TcpSummary tcp;
  const auto it = obj.find("tcp");
  if (it != obj.end() && !stats::tcp_summary_from_json(*it, tcp)) {
    fail(child(path, "tcp"), "not a valid TCP summary");
  }
  return tcp;
}

/// Calls read(element, its path) for each element of the array at `key` of `obj`.
template <typename Read>
void each(const json& obj, const std::string& path, std::string_view key, Read read) {
  const json& list = read_array(obj, path, key);
  for (std::size_t i = 0; i < list.size(); ++i) read(list[i], child(child(path, key), i));
}

DatagramCounters read_datagrams(const json& j, const std::string& path) {
  DatagramCounters d;
  d.sent = read_uint(j, path, "sent");
  d.received = read_uint(j, path, "received");
  d.lost = read_uint(j, path, "gaps");
  d.late = read_uint(j, path, "late");
  d.duplicates = read_uint(j, path, "duplicates");
  d.timeouts = read_uint(j, path, "timeouts");
  d.jitter_ns = read_uint(j, path, "jitter_ns");
  return d;
}

ZeroCopyCounters read_zerocopy(const json& j, const std::string& path) {
  ZeroCopyCounters z;
  z.sends = read_uint(j, path, "sends");
  z.zero_copied = read_uint(j, path, "zero_copied");
  z.copied = read_uint(j, path, "copied");
  return z;
}

SlotCounters read_counters(const json& j, const std::string& path) {
  SlotCounters c;
  c.ops = read_uint(j, path, "ops");
  c.bytes_read = read_uint(j, path, "bytes_read");
  c.bytes_written = read_uint(j, path, "bytes_written");
  c.expired = read_uint(j, path, "expired");
  const std::string at = child(path, "errors");
  const json& errors = member(j, path, "errors");
  expect_object(errors, at);
  for (const auto& item : errors.items()) {
    const std::string& name = item.key();
    if (name == "total") continue;  // a figure: the sum of the kinds
    const auto kind = error_kind_from_string(name);
    if (!kind) fail(child(at, name), "not an error kind");
    c.errors[static_cast<std::size_t>(*kind)] = read_uint(errors, at, name);
  }
  if (j.contains("datagrams")) {
    c.datagrams = read_datagrams(j.at("datagrams"), child(path, "datagrams"));
  }
  if (j.contains("zerocopy")) c.zerocopy = read_zerocopy(j.at("zerocopy"), child(path, "zerocopy"));
  if (j.contains("scheduled")) c.scheduled = read_uint(j, path, "scheduled");
  return c;
}

SlotStats read_handshake_part(const json& j, const std::string& path) {
  SlotStats s;
  s.counters.ops = read_uint(j, path, "ops");
  s.latency = read_latency(j, path, "latency_ns");
  if (j.contains("negotiated")) s.tls = read_string(j, path, "negotiated");
  return s;
}

FlowopResult read_flowop(const json& j, const std::string& path) {
  FlowopResult f;
  f.type = read_string(j, path, "type");
  f.stats.counters = read_counters(j, path);
  f.stats.latency = read_latency(j, path, "latency_ns");
  f.stats.tcp = read_tcp(j, path);
  if (j.contains("handshakes")) {
    const std::string at = child(path, "handshakes");
    const json& h = member(j, path, "handshakes");
    f.handshakes =
        HandshakeResult{read_handshake_part(member(h, at, "full"), child(at, "full")),
                        read_handshake_part(member(h, at, "resumed"), child(at, "resumed"))};
  }
  return f;
}

TxnResult read_transaction(const json& j, const std::string& path) {
  TxnResult t;
  t.name = read_string(j, path, "name");
  t.stats.counters = read_counters(member(j, path, "counters"), child(path, "counters"));
  t.stats.latency = read_latency(j, path, "latency_ns");
  t.stats.tcp = read_tcp(j, path);
  if (j.contains("latency_uncorrected_ns")) {
    t.uncorrected_latency = read_latency(j, path, "latency_uncorrected_ns");
  }
  each(j, path, "flowops",
       [&](const json& f, const std::string& at) { t.flowops.push_back(read_flowop(f, at)); });
  return t;
}

GroupResult read_group(const json& j, const std::string& path) {
  GroupResult g;
  g.name = read_string(j, path, "name");
  g.strands = read_uint(j, path, "strands");
  each(j, path, "transactions", [&](const json& t, const std::string& at) {
    g.transactions.push_back(read_transaction(t, at));
  });
  if (!j.contains("strand_counts")) return g;
  each(j, path, "strand_counts", [&](const json& c, const std::string& at) {
    g.strand_counts.push_back(
        {read_uint(c, at, "ops"), read_uint(c, at, "bytes"), read_uint(c, at, "transactions")});
  });
  return g;
}

ProcessRecord read_process(const json& j, const std::string& path) {
  ProcessRecord p;
  p.name = read_string(j, path, "name");
  p.pid = read_int(j, path, "pid");
  p.strands = read_uint(j, path, "strands");
  p.connections = read_uint(j, path, "connections");
  p.rss_growth_bytes = read_int(j, path, "rss_growth_bytes");
  p.cpu_user_s = read_number(j, path, "cpu_user_s");
  p.cpu_sys_s = read_number(j, path, "cpu_sys_s");
  return p;
}

}  // namespace

json errors_to_json(const SlotCounters& counters) {
  json j = json::object();
  for (std::size_t k = 0; k < kErrorKindCount; ++k) {
    if (counters.errors[k] != 0) j[std::string(kErrorKindNames[k])] = counters.errors[k];
  }
  j["total"] = counters.error_total();
  return j;
}

json datagrams_to_json(const DatagramCounters& d) {
  return json{{"sent", d.sent},         {"received", d.received},  {"lost", d.net_lost()},
              {"gaps", d.lost},         {"late", d.late},          {"duplicates", d.duplicates},
              {"timeouts", d.timeouts}, {"jitter_ns", d.jitter_ns}};
}

json zerocopy_to_json(const ZeroCopyCounters& z) {
  return json{{"sends", z.sends},
              {"zero_copied", z.zero_copied},
              {"copied", z.copied},
              {"unconfirmed", z.unconfirmed()}};
}

json to_json(const RunResult& r) {
  json groups = json::array();
  for (const auto& g : r.groups) groups.push_back(group_to_json(g));
  json windows = json::array();
  for (const auto& w : r.windows) {
    windows.push_back({{"start_unix_ns", w.start_unix_ns},
                       {"elapsed_ns", w.elapsed.count()},
                       {"is_duration", w.is_duration},
                       {"connections_read_exactly", w.connections_read_exactly}});
  }
  json errors = json::array();
  for (const auto& e : r.error_samples) {
    errors.push_back({{"where", e.where}, {"message", e.message}, {"stopped", e.stopped}});
  }
  json processes = json::array();
  for (const auto& p : r.processes) processes.push_back(process_to_json(p));
  return json{{"groups", std::move(groups)},
              {"windows", std::move(windows)},
              {"connections_requested", r.connections_requested},
              {"connections_established", r.connections_established},
              {"failed_strands", r.failed_strands},
              {"error_samples", std::move(errors)},
              {"processes", std::move(processes)}};
}

std::optional<RunResult> run_result_from_json(const json& j, std::string& error) {
  try {
    expect_object(j, "");
    RunResult r;
    each(j, "", "groups",
         [&](const json& g, const std::string& path) { r.groups.push_back(read_group(g, path)); });
    each(j, "", "windows", [&](const json& w, const std::string& path) {
      r.windows.push_back({read_int(w, path, "start_unix_ns"),
                           std::chrono::nanoseconds(read_int(w, path, "elapsed_ns")),
                           read_bool(w, path, "is_duration")});
      // Absent from documents written before it was counted.
      if (w.contains("connections_read_exactly"))
        r.windows.back().connections_read_exactly = read_uint(w, path, "connections_read_exactly");
    });
    r.connections_requested = read_uint(j, "", "connections_requested");
    r.connections_established = read_uint(j, "", "connections_established");
    r.failed_strands = read_uint(j, "", "failed_strands");
    each(j, "", "error_samples", [&](const json& e, const std::string& path) {
      r.error_samples.push_back({read_string(e, path, "where"), read_string(e, path, "message"),
                                 read_bool(e, path, "stopped")});
    });
    each(j, "", "processes", [&](const json& p, const std::string& path) {
      r.processes.push_back(read_process(p, path));
    });
    return r;
  } catch (const Malformed& m) {
    error = fmt::format("malformed results: {}", m.message);
    return std::nullopt;
  }
}

}  // namespace volley::results
