#pragma once
// The slave: accepts masters on its control port and serves each one in its own session (several
// at once are fine: each session has its own engine and threads). A session goes Greeting ->
// Idle -> Loaded -> Running -> Idle (session.hpp's ServedPhase and its table), and whatever
// ends it (finished, master gone, bad message) leaves nothing behind: its engine is stopped and
// joined and its listeners are closed. Thread: the io_context given at construction.
#include <cstdint>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json_fwd.hpp>

#include "volley/control/auth.hpp"
#include "volley/control/session.hpp"
#include "volley/engine/io_engine.hpp"
#include "volley/core/throttled_log.hpp"
#include "volley/transport/source_quota.hpp"
#include "volley/transport/tls_identity.hpp"

namespace volley::control {

struct LoadRequest;
struct LoadedRun;

/// What one slave grants its masters. A request beyond a limit is refused with a sentence naming
/// the limit and the `volley serve` flag that raises it (docs/security.md lists them all).
struct SlaveLimits {
  std::size_t max_sessions = 16;               ///< --max-sessions: masters served at once
  std::uint64_t max_strands = 100000;          ///< --max-strands: strands per session
  std::uint64_t max_connections = 100000;      ///< --max-connections: per session
  std::size_t max_workers = 1024;              ///< --max-workers: worker threads per session
  std::chrono::seconds max_run{24 * 3600};     ///< --max-run: duration steps of one run, summed
  std::chrono::seconds max_think{3600};        ///< --max-think: one think flowop
  std::uint64_t max_profile_bytes = 1U << 20;  ///< --max-profile-bytes
  std::uint64_t max_io_bytes = 1U << 30;       ///< --max-io-bytes: one read/write buffer
  std::uint32_t max_frame_bytes = 16U << 20;   ///< --max-frame-bytes: after authentication
  /// --hello-timeout: hello and authentication. Short: a master sends its hello as it connects
  /// and needs one more round trip to prove the key; only a stranger needs longer.
  std::chrono::milliseconds hello_timeout{2000};
  /// --header-timeout: a data connection's time to send its header before it is closed.
  std::chrono::milliseconds header_timeout{5000};
};

struct SlaveSettings {
  std::size_t default_workers = 1;
  SlaveLimits limits;
  /// The pre-shared key (--key-file): when set, a master must prove it knows it before anything
  /// else, and every later message is authenticated (control/handshake.hpp).
  std::optional<Secret> key;
  /// Processes one run is spread over: 0 decides from the profile, the descriptor limit and the
  /// cores (process::process_count); 1 keeps every run in this process.
  std::uint32_t processes = 0;
  /// The volley binary child processes run.
  std::string child_executable = "/proc/self/exe";
  /// A master silent for this long (no message, no ping) is considered gone.
  std::chrono::milliseconds silence_timeout{10000};
  /// One line per event worth telling an operator (session start/end, errors).
  std::function<void(const std::string&)> log;
  /// --tls-cert and --tls-key: the certificate TLS accepts show; null: a fresh self-signed one
  /// per run (transport::TlsIdentity::generate).
  std::shared_ptr<const transport::TlsIdentity> tls_identity;
  /// --io: the engine this slave's runs use (a child process: the one its parent names).
  engine::IoEngine io = engine::IoEngine::kEpoll;
};

/// How a slave's run ends with its figures handed over: every step done (the master's `finish`),
/// or cut short where it stands (the master's `stop`, after Ctrl-C).
enum class RunEnd { kFinished, kStopped };

class SlaveServer {
 public:
  SlaveServer(boost::asio::io_context& context, SlaveSettings settings);
  /// Logs the count of refused peers still left out (those the shutdown itself ended).
  ~SlaveServer();
  SlaveServer(const SlaveServer&) = delete;
  SlaveServer& operator=(const SlaveServer&) = delete;

  /// Binds the control port. Returns an error sentence, or "".
  std::string listen(const boost::asio::ip::tcp::endpoint& endpoint);
  [[nodiscard]] std::uint16_t port() const;
  /// Starts accepting masters.
  void start();
  /// Serves one session on an already connected socket: a child process's link to its parent
  /// (`volley serve --child-fd`). The context runs out of work when that session ends.
  void adopt(boost::asio::ip::tcp::socket socket);
  /// Stops accepting and aborts every session; the context then runs out of work.
  void stop();
  [[nodiscard]] std::size_t active_sessions() const { return sessions_; }

 private:
  struct Session;
  boost::asio::awaitable<void> accept_loop();
  /// Serves connection `id` (its place among those owing their hello, if it has one).
  boost::asio::awaitable<void> serve(boost::asio::ip::tcp::socket socket, std::uint64_t id);
  /// The session's script; may throw (a bug or an allocation failure): serve() then still
  /// cleans up everything the session holds.
  boost::asio::awaitable<void> converse(Session& s);
  /// Handles one message from the master as the session's table (session.hpp) says: refused
  /// with one sentence, or handed to its handler. Sets s.end_reason when the session must end.
  boost::asio::awaitable<void> on_message(Session& s, const nlohmann::json& m);
  /// A greeted session refuses a message: an `error` with the sentence, and a throttled line.
  boost::asio::awaitable<void> refuse(Session& s, std::string why);
  /// A peer refused during its greeting: one `error`, and the session ends.
  boost::asio::awaitable<void> end_greeting(Session& s, std::string why);
  /// `start`, `proceed`, `end_step`, `written` and `finish` of a run in this process, judged by
  /// its step barrier.
  boost::asio::awaitable<void> on_step_message(Session& s, MessageType type,
                                               const nlohmann::json& m);
  boost::asio::awaitable<void> on_start(Session& s, const nlohmann::json& m);
  boost::asio::awaitable<void> on_end_step(Session& s, std::size_t step, const nlohmann::json& m);
  /// The hello and, with a key, the master's proof; sets s.greeted once the master may go on.
  boost::asio::awaitable<void> greet(Session& s, const nlohmann::json& m);
  /// Counts `s` among the greeted sessions, or says why not (--max-sessions).
  std::string admit(Session& s);
  /// `load`: the profile parsed, mirrored, compiled, checked against the limits and built into
  /// an engine with its listeners open (or spread over child processes); answered `loaded`, or
  /// `rejected` with why.
  boost::asio::awaitable<void> on_load(Session& s, const nlohmann::json& m);
  boost::asio::awaitable<void> reject(Session& s, std::string why);
  /// Builds `run`'s engine for `load` and opens its listeners; why it could not, or "".
  std::string build_engine(Session& s, LoadedRun& run, const LoadRequest& load,
                           std::size_t workers);
  /// A run spread over child processes (docs/architecture.md, "Processes"): starts them, has
  /// each load its shard, and answers the master's load for all of them. `tls_identity`: what
  /// their TLS accepts show (null without any).
  boost::asio::awaitable<void> load_children(
      Session& s, const LoadRequest& load, std::uint32_t processes, std::size_t workers,
      std::shared_ptr<const transport::TlsIdentity> tls_identity);
  /// The master's messages for a run spread over children: relayed to every child.
  boost::asio::awaitable<void> on_proxied(Session& s, MessageType type, const nlohmann::json& m);
  /// A child's message or loss: relayed to the master once every child agrees (step_done,
  /// results), or at once (a problem, naming the child).
  boost::asio::awaitable<void> on_child(Session& s, std::size_t child, const nlohmann::json& m);
  /// The master's `interval{n}`: the engine's datagram counts since the last one, answered with
  /// `interval_counts{n, ...}` once the workers have handed them over (interval_wire.hpp).
  boost::asio::awaitable<void> on_interval(Session& s, const nlohmann::json& m);
  /// The end of step `step`: drains to the master's `written`, then a LocalDrained event.
  void start_drain(Session& s, std::size_t step);
  /// Once a step is over and ended: fewer TCP data connections accepted than the master
  /// established fails the run with an `error` saying so. False when that send failed.
  boost::asio::awaitable<bool> report_missing_connections(Session& s, std::size_t step);
  /// Joins the run's engine (off the control thread), sends the master its `results` and drops
  /// the run: after the last step (`finish`), or at once (`stop`: the master was interrupted).
  boost::asio::awaitable<void> send_results(Session& s, RunEnd end);
  /// Stops and joins the session's engine (joined off the control thread) and drops the run.
  boost::asio::awaitable<void> end_run(Session& s);
  void log(const std::string& line) const;
  /// One line for a peer refused before or at its handshake: throttled (a stranger can cause
  /// thousands), a count of those left out following within a second.
  void log_refused_peer(const std::string& line);
  void arm_log_flush();
  /// At the end of a run (its engine joined): the count of its data connections closed without
  /// a valid header, all of them, in one line.
  void log_run_strangers(const Session& s);

  boost::asio::io_context& context_;
  SlaveSettings settings_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::size_t sessions_ = 0;  ///< connections, greeted or not
  /// Greeted sessions: what --max-sessions bounds. A connection still owing its hello holds no
  /// slot, so a few silent connections cannot lock masters out until their hello deadline.
  std::size_t greeted_ = 0;
  /// Connections still owing their hello (or their proof of the key), by source address: a
  /// flood from one address cannot take the places a master from another needs.
  transport::SourceQuota awaiting_hello_;
  /// How to close each connection in awaiting_hello_ to make room for a newcomer.
  std::map<std::uint64_t, std::function<void(transport::SourceQuota::Verdict)>> evict_hooks_;
  std::uint64_t next_session_ = 0;
  bool stopping_ = false;
  /// Live sessions: how to abort each (stop() calls them all).
  std::map<std::uint64_t, std::function<void()>> abort_hooks_;
  /// Peers refused before or at the handshake (busy, no hello in time, not a master, wrong key):
  /// a stranger can cause thousands, so at most one line a second; a timer (log_flush_) logs
  /// the count of those left out when no later line does.
  core::ThrottledLog refused_peers_;
  boost::asio::steady_timer log_flush_;
  bool log_flush_armed_ = false;
};

}  // namespace volley::control
