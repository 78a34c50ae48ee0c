#include "volley/control/message.hpp"

#include <limits>

#include <fmt/format.h>

#include "volley/core/printable.hpp"
#include "json_number.hpp"
#include "volley/engine/datagram_json.hpp"

namespace volley::control {

using detail::checked_int;
using detail::checked_uint;
using nlohmann::json;

namespace {

json counters_to_json(const results::SlotCounters& c) {
  json j{{"ops", c.ops},
         {"bytes_read", c.bytes_read},
         {"bytes_written", c.bytes_written},
         {"expired", c.expired},
         {"errors", c.errors}};
  if (c.datagrams.any()) j["datagrams"] = engine::datagrams_to_json(c.datagrams);
  return j;
}

results::SlotCounters counters_from_json(const json& j) {
  results::SlotCounters c;
  c.ops = checked_uint(j.at("ops"));
  c.bytes_read = checked_uint(j.at("bytes_read"));
  c.bytes_written = checked_uint(j.at("bytes_written"));
  c.expired = checked_uint(j.at("expired"));
  const auto& errors = j.at("errors");
  for (std::size_t i = 0; i < c.errors.size() && i < errors.size(); ++i) {
    c.errors[i] = checked_uint(errors[i]);
  }
  if (const auto it = j.find("datagrams"); it != j.end()) {
    c.datagrams = engine::datagrams_from_json(*it);
  }
  return c;
}

json stats_to_json(const results::SlotStats& s) {
  json latency;
  stats::to_json(latency, s.latency);
  json out{{"counters", counters_to_json(s.counters)}, {"latency", std::move(latency)}};
  if (!s.tcp.empty()) out["tcp"] = s.tcp;
  return out;
}

results::SlotStats stats_from_json(const json& j) {
  results::SlotStats s;
  s.counters = counters_from_json(j.at("counters"));
  auto histogram = stats::histogram_from_json(j.at("latency"));
  if (!histogram) throw json::other_error::create(501, "bad latency histogram", &j);
  s.latency = std::move(*histogram);
  if (const auto it = j.find("tcp"); it != j.end() && !stats::tcp_summary_from_json(*it, s.tcp)) {
    throw json::other_error::create(501, "bad tcp summary", &j);
  }
  return s;
}

}  // namespace

std::string text_field(const json& m, std::string_view key, std::string_view fallback) {
  if (!m.is_object()) return std::string(fallback);
  const auto it = m.find(key);
  if (it == m.end() || !it->is_string()) return std::string(fallback);
  return it->get<std::string>();
}

std::optional<std::uint64_t> uint_field(const json& m, std::string_view key) {
  if (!m.is_object()) return std::nullopt;
  const auto it = m.find(key);
  if (it == m.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<std::uint64_t>();
}

json message(std::string_view type, json fields) {
  fields["type"] = type;
  return fields;
}

json make_hello() {
  return message("hello", {{"magic", kMagic},
                           {"protocol_version", kProtocolVersion},
                           {"volley_version", VOLLEY_VERSION}});
}

json make_hello(const AnnouncedLimits& limits) {
  json hello = make_hello();
  hello["limits"] = {{"max_frame_bytes", limits.max_frame_bytes},
                     {"max_profile_bytes", limits.max_profile_bytes}};
  return hello;
}

AnnouncedLimits announced_limits(const json& hello) {
  AnnouncedLimits limits;
  const auto it = hello.is_object() ? hello.find("limits") : hello.end();
  if (it == hello.end() || !it->is_object()) return limits;
  limits.max_frame_bytes = uint_field(*it, "max_frame_bytes").value_or(0);
  limits.max_profile_bytes = uint_field(*it, "max_profile_bytes").value_or(0);
  return limits;
}

std::string check_load_fits(const AnnouncedLimits& limits, std::uint64_t frame_bytes,
                            std::uint64_t profile_bytes) {
  if (limits.max_profile_bytes > 0 && profile_bytes > limits.max_profile_bytes) {
    return fmt::format("the profile is {} bytes; the slave accepts at most {} (volley serve "
                       "--max-profile-bytes)",
                       profile_bytes, limits.max_profile_bytes);
  }
  if (limits.max_frame_bytes > 0 && frame_bytes > limits.max_frame_bytes) {
    return fmt::format("the load message is {} bytes; the slave accepts at most {} (volley serve "
                       "--max-frame-bytes)",
                       frame_bytes, limits.max_frame_bytes);
  }
  return {};
}

std::string check_hello(const json& m, const std::string& peer) {
  if (text_field(m, "type") != "hello" || text_field(m, "magic") != kMagic) {
    return fmt::format("{} is not a volley slave or master (unexpected greeting)", peer);
  }
  const auto version = uint_field(m, "protocol_version");
  if (version != kProtocolVersion) {
    return fmt::format("{} speaks control protocol {} (volley {}), this volley speaks {}", peer,
                       version ? std::to_string(*version) : std::string("?"),
                       core::printable(text_field(m, "volley_version", "?"), 40), kProtocolVersion);
  }
  return {};
}

json to_json(const LoadRequest& load) {
  json files = json::array();
  for (const auto& set : load.file_sets) {
    json entries = json::array();
    for (const auto& f : set.files) entries.push_back({{"path", f.path}, {"size", f.size_bytes}});
    files.push_back({{"path", set.source.path},
                     {"is_directory", set.source.is_directory},
                     {"files", std::move(entries)}});
  }
  json out = message("load", {{"profile_text", load.profile_text},
                          {"profile_file", load.profile_file},
                          {"variables", load.variables},
                          {"host", load.host},
                          {"seed", load.seed},
                          {"token", load.token},
                          {"workers", load.workers},
                          {"record_latency", load.record_latency},
                          {"sample_tcp", load.sample_tcp},
                          {"file_sets", std::move(files)}});
  if (load.max_duration_ns > 0) out["max_duration_ns"] = load.max_duration_ns;
  if (load.peers != 1) out["peers"] = load.peers;
  if (load.shard_count > 1 || load.master_side || !load.listen_address.empty()) {
    out["shard"] = {{"index", load.shard_index}, {"count", load.shard_count}};
    out["side"] = load.master_side ? "master" : "slave";
    out["listen_address"] = load.listen_address;
  }
  return out;
}

std::optional<LoadRequest> load_from_json(const json& m, std::string& error) {
  try {
    LoadRequest load;
    load.profile_text = m.at("profile_text").get<std::string>();
    load.profile_file = m.at("profile_file").get<std::string>();
    load.variables = m.at("variables").get<std::map<std::string, std::string>>();
    load.host = m.at("host").get<std::string>();
    load.seed = checked_uint(m.at("seed"));
    load.token = static_cast<std::uint32_t>(
        checked_uint(m.at("token"), std::numeric_limits<std::uint32_t>::max()));
    if (m.contains("peers")) {
      load.peers = static_cast<std::uint32_t>(
          checked_uint(m.at("peers"), std::numeric_limits<std::uint32_t>::max()));
    }
    load.workers = checked_uint(m.at("workers"), std::numeric_limits<std::size_t>::max());
    load.record_latency = !m.contains("record_latency") || m.at("record_latency").get<bool>();
    load.sample_tcp = !m.contains("sample_tcp") || m.at("sample_tcp").get<bool>();
    if (m.contains("max_duration_ns")) {
      load.max_duration_ns = m.at("max_duration_ns").get<std::int64_t>();
      if (load.max_duration_ns <= 0) {
        error = "malformed load message: max_duration_ns must be positive";
        return std::nullopt;
      }
    }
    if (m.contains("shard")) {
      load.shard_index = m.at("shard").at("index").get<std::uint32_t>();
      load.shard_count = m.at("shard").at("count").get<std::uint32_t>();
      load.master_side = m.at("side").get<std::string>() == "master";
      load.listen_address = m.at("listen_address").get<std::string>();
      if (load.shard_count == 0 || load.shard_index >= load.shard_count) {
        error = "malformed load message: shard index out of range";
        return std::nullopt;
      }
    }
    for (const auto& s : m.at("file_sets")) {
      engine::FileSet set{{s.at("path").get<std::string>(), s.at("is_directory").get<bool>()}, {}};
      for (const auto& f : s.at("files")) {
        set.files.push_back({f.at("path").get<std::string>(), checked_uint(f.at("size"))});
      }
      load.file_sets.push_back(std::move(set));
    }
    return load;
  } catch (const json::exception& e) {
    error = fmt::format("malformed load message: {}", e.what());
    return std::nullopt;
  }
}

json process_to_json(const results::ProcessRecord& p) {
  return json{{"name", p.name},
              {"pid", p.pid},
              {"strands", p.strands},
              {"connections", p.connections},
              {"rss_growth_bytes", p.rss_growth_bytes},
              {"cpu_user_s", p.cpu_user_s},
              {"cpu_sys_s", p.cpu_sys_s}};
}

results::ProcessRecord process_from_json(const json& j) {
  return results::ProcessRecord{j.at("name").get<std::string>(),
                                j.at("pid").get<std::int64_t>(),
                                j.at("strands").get<std::uint64_t>(),
                                j.at("connections").get<std::uint64_t>(),
                                j.at("rss_growth_bytes").get<std::int64_t>(),
                                j.at("cpu_user_s").get<double>(),
                                j.at("cpu_sys_s").get<double>()};
}

json to_json(const results::RunResult& r) {
  json groups = json::array();
  for (const auto& g : r.groups) {
    json txns = json::array();
    for (const auto& t : g.transactions) {
      json flowops = json::array();
      for (const auto& f : t.flowops) flowops.push_back({{"type", f.type}, {"stats", stats_to_json(f.stats)}});
      json tj{{"name", t.name}, {"stats", stats_to_json(t.stats)}, {"flowops", std::move(flowops)}};
      if (t.uncorrected_latency) {
        json u;
        stats::to_json(u, *t.uncorrected_latency);
        tj["uncorrected_latency"] = std::move(u);
      }
      txns.push_back(std::move(tj));
    }
    groups.push_back({{"name", g.name}, {"strands", g.strands}, {"transactions", std::move(txns)}});
  }
  json windows = json::array();
  for (const auto& w : r.windows) {
    windows.push_back({{"start_unix_ns", w.start_unix_ns},
                       {"elapsed_ns", w.elapsed.count()},
                       {"is_duration", w.is_duration}});
  }
  json errors = json::array();
  for (const auto& e : r.error_samples) {
    errors.push_back({{"where", e.where}, {"message", e.message}, {"stopped", e.stopped}});
  }
  json processes = json::array();
  for (const auto& p : r.processes) processes.push_back(process_to_json(p));
  return json{{"groups", std::move(groups)},
              {"windows", std::move(windows)},
              {"processes", std::move(processes)},
              {"connections_requested", r.connections_requested},
              {"connections_established", r.connections_established},
              {"failed_strands", r.failed_strands},
              {"error_samples", std::move(errors)}};
}

std::optional<results::RunResult> run_result_from_json(const json& j, std::string& error) {
  try {
    results::RunResult r;
    for (const auto& g : j.at("groups")) {
      results::GroupResult gr{g.at("name").get<std::string>(), checked_uint(g.at("strands")), {}};
      for (const auto& t : g.at("transactions")) {
        results::TxnResult tr{t.at("name").get<std::string>(), stats_from_json(t.at("stats")), {}, {}};
        if (t.contains("uncorrected_latency")) {
          tr.uncorrected_latency = stats::histogram_from_json(t.at("uncorrected_latency"));
        }
        for (const auto& f : t.at("flowops")) {
          tr.flowops.push_back({f.at("type").get<std::string>(), stats_from_json(f.at("stats"))});
        }
        gr.transactions.push_back(std::move(tr));
      }
      r.groups.push_back(std::move(gr));
    }
    for (const auto& w : j.at("windows")) {
      r.windows.push_back({checked_int(w.at("start_unix_ns")),
                           std::chrono::nanoseconds(checked_int(w.at("elapsed_ns"))),
                           w.at("is_duration").get<bool>()});
    }
    r.connections_requested = checked_uint(j.at("connections_requested"));
    r.connections_established = checked_uint(j.at("connections_established"));
    r.failed_strands = checked_uint(j.at("failed_strands"));
    for (const auto& e : j.at("error_samples")) {
      r.error_samples.push_back({e.at("where").get<std::string>(),
                                 e.at("message").get<std::string>(), e.value("stopped", false)});
    }
    if (const auto p = j.find("processes"); p != j.end()) {
      for (const auto& record : *p) r.processes.push_back(process_from_json(record));
    }
    return r;
  } catch (const json::exception& e) {
    error = fmt::format("malformed results: {}", e.what());
    return std::nullopt;
  }
}

}  // namespace volley::control
