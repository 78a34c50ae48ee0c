#include "volley/control/message.hpp"

#include <limits>

#include <fmt/format.h>

#include "volley/core/printable.hpp"
#include "json_number.hpp"

namespace volley::control {

using detail::checked_uint;
using nlohmann::json;

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
    return fmt::format(
        "the profile is {} bytes; the slave accepts at most {} (volley serve "
        "--max-profile-bytes)",
        profile_bytes, limits.max_profile_bytes);
  }
  if (limits.max_frame_bytes > 0 && frame_bytes > limits.max_frame_bytes) {
    return fmt::format(
        "the load message is {} bytes; the slave accepts at most {} (volley serve "
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
  if (load.count_strands) out["count_strands"] = true;
  if (load.io == engine::IoEngine::kUring) out["io"] = "uring";
  if (load.peers != 1) out["peers"] = load.peers;
  if (load.shard_count > 1 || load.master_side || !load.listen_address.empty()) {
    out["shard"] = {{"index", load.shard_index}, {"count", load.shard_count}};
    out["side"] = load.master_side ? "master" : "slave";
    out["listen_address"] = load.listen_address;
  }
  if (!load.tls_pins.empty() || !load.tls_cert_pem.empty() || !load.tls_ca_file.empty()) {
    out["tls"] = {{"pins", load.tls_pins},
                  {"cert", load.tls_cert_pem},
                  {"key", load.tls_key_pem},
                  {"ca_file", load.tls_ca_file}};
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
    load.count_strands = m.contains("count_strands") && m.at("count_strands").get<bool>();
    if (m.contains("io")) {
      const auto io = m.at("io").get<std::string>();
      if (io != "uring" && io != "epoll") {
        error = "malformed load message: io must be \"uring\" or \"epoll\"";
        return std::nullopt;
      }
      load.io = io == "uring" ? engine::IoEngine::kUring : engine::IoEngine::kEpoll;
    }
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
    if (m.contains("tls")) {
      const json& tls = m.at("tls");
      load.tls_pins = tls.at("pins").get<std::vector<std::string>>();
      load.tls_cert_pem = tls.at("cert").get<std::string>();
      load.tls_key_pem = tls.at("key").get<std::string>();
      load.tls_ca_file = tls.at("ca_file").get<std::string>();
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

}  // namespace volley::control
