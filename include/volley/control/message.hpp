#pragma once
// The control protocol's messages: one TCP connection per slave, master speaks first. Every
// message is a JSON object with a "type"; the fields of each type are listed in
// docs/control-protocol.md together with the states in which each may arrive.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "volley/engine/io_engine.hpp"
#include "volley/engine/plan.hpp"

namespace volley::control {

/// 2: the end-of-step drain (written, drained). 3: the slave's hello may ask for a key (auth,
/// auth_ok), and then every frame carries a MAC. 4: the slaves' UDP counts per interval
/// (interval, interval_counts: interval_wire.hpp). 5: end_step says how many TCP data connections
/// the master established to the slave (`connected`: connected_wire.hpp). 6: `results` carries
/// the result in its one JSON form, the result document's (results/result_json.hpp).
inline constexpr std::uint32_t kProtocolVersion = 6;
inline constexpr std::string_view kMagic = "volley-control";

/// What a master asks a slave to load: the profile as text, resolved the slave's way.
struct LoadRequest {
  std::string profile_text;
  std::string profile_file;                      ///< for the slave's diagnostics
  std::map<std::string, std::string> variables;  ///< exactly the values the master used
  std::string host;                              ///< the remotehost this slave serves
  std::uint64_t seed = 0;
  std::uint32_t token = 0;
  /// A master's child process: the master's slaves (see engine::EngineConfig::peers).
  std::uint32_t peers = 1;
  std::size_t workers = 0;                 ///< 0: the slave's own default
  std::vector<engine::FileSet> file_sets;  ///< sendfile sizes (the slave has no files)
  bool record_latency = true;
  bool sample_tcp = true;  ///< off: no TCP_INFO reads (cost measurement)
  /// Each strand's own counts in the results (engine::EngineConfig::count_strands); a master
  /// asks it of its child processes for uperf's -T.
  bool count_strands = false;
  /// --max-duration, ns (0: none): cap every duration= after parsing, as the master did.
  std::int64_t max_duration_ns = 0;
  /// Processes (docs/architecture.md): a parent sends its child process the same load with the
  /// share it runs (strands s with s % shard_count == shard_index), and whether it runs the
  /// master's side (the profile as written) or the slave's (the mirror). Sent only to children.
  std::uint32_t shard_index = 0;
  std::uint32_t shard_count = 1;
  bool master_side = false;
  std::string listen_address = {};  ///< where a child binds its data listeners
  /// TLS connects: the fingerprints of the certificates they may meet (the other side's, sent
  /// over this authenticated channel: transport::TlsTrust).
  std::vector<std::string> tls_pins = {};
  /// A parent's TLS certificate and key (PEM) for its child process, and a master's --tls-ca.
  /// Sent only to children, over their socketpair: never to a peer.
  std::string tls_cert_pem = {};
  std::string tls_key_pem = {};
  std::string tls_ca_file = {};
  /// The engine a parent's child process runs (its own --io). Sent only to children: a slave
  /// runs the engine its own command line chose.
  engine::IoEngine io = engine::IoEngine::kEpoll;
};

/// A slave's limits as its hello announces them, so a master can say what is too big before it
/// sends it (a refused frame would otherwise end in a reset, its reason lost).
struct AnnouncedLimits {
  std::uint64_t max_frame_bytes = 0;    ///< 0: not announced
  std::uint64_t max_profile_bytes = 0;  ///< 0: not announced
};

nlohmann::json make_hello();
/// A slave's hello: make_hello() plus its limits.
nlohmann::json make_hello(const AnnouncedLimits& limits);
/// The limits in a slave's hello (zeros where it announced none).
AnnouncedLimits announced_limits(const nlohmann::json& hello);
/// Empty when a load of `frame_bytes` carrying `profile_bytes` of profile fits the slave's
/// announced limits; otherwise the sentence to show, naming the limit and the flag that raises it.
std::string check_load_fits(const AnnouncedLimits& limits, std::uint64_t frame_bytes,
                            std::uint64_t profile_bytes);
/// Empty when `message` is a compatible hello; otherwise the sentence to show.
std::string check_hello(const nlohmann::json& message, const std::string& peer);

nlohmann::json to_json(const LoadRequest& load);
std::optional<LoadRequest> load_from_json(const nlohmann::json& message, std::string& error);

/// A peer's field read without trusting it: the string at `key`, or `fallback` when it is missing
/// or not a string. Never throws (nlohmann's value() throws on a wrongly typed field).
std::string text_field(const nlohmann::json& message, std::string_view key,
                       std::string_view fallback = "");
/// The unsigned integer at `key`, or nullopt when missing, negative or not an integer.
std::optional<std::uint64_t> uint_field(const nlohmann::json& message, std::string_view key);

/// A message with just a type and optional fields.
nlohmann::json message(std::string_view type, nlohmann::json fields = nlohmann::json::object());

}  // namespace volley::control
