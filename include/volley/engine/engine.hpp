#pragma once
// The engine runs one side (master or slave) of a compiled Plan: a fixed set of worker threads,
// each with its own io_context, running the group's strands as coroutines. It does not talk to
// the other side: whoever owns it (the master's run controller or a slave session) drives the
// transaction barrier with release() / end_txn() and hears back through on_txn_done.
//
// Thread: construct, start, release, end_txn, stop and finish from one controlling thread.
// on_txn_done is called on a worker thread; it must only post to the controller's context.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "volley/engine/io_engine.hpp"
#include "volley/engine/plan.hpp"
#include "volley/transport/tls_setup.hpp"
#include "volley/results/run_result.hpp"
#include "volley/engine/step_bytes.hpp"
#include "volley/transport/data_listener.hpp"
#include "volley/transport/memory_connection.hpp"
#include "volley/transport/udp_listener.hpp"

namespace volley::engine {

class StepLedger;
class Worker;

/// How long a slave step with strands still waiting to accept must be quiet before the cut. When
/// an accept queue overflows (tens of thousands of connects), the kernel drops the handshake's
/// last ACK: the master counts the connection, but it reaches the listener only when the
/// master's first data or the SYN-ACK is retransmitted (1 s, then 3 s), long after a quiet spell
/// of 30 ms; cutting then lost thousands of the 50,000 connections of many-connections.xml.
/// With the peer's count (end_txn's peer_connected), only a step with connections still missing
/// waits this long; after it, the slave reports them missing.
inline constexpr auto kAcceptQuiet = std::chrono::seconds(4);

/// Where a remotehost's data connections go.
struct HostTarget {
  boost::asio::ip::address address;
  std::uint16_t negotiated_port = 0;  ///< the peer's data listener (for connects without port=)
  /// A peer spread over processes: one negotiated port per process, and strand s of every group
  /// lives in process s % size (docs/architecture.md, "Processes"). Empty: negotiated_port.
  std::vector<std::uint16_t> shard_ports = {};
  /// The negotiated port strand `strand` connects to.
  [[nodiscard]] std::uint16_t port_for(std::uint64_t strand) const {
    return shard_ports.empty() ? negotiated_port : shard_ports[strand % shard_ports.size()];
  }
  /// The slave's index in the run: its connections carry the token tokens().token_for(peer).
  std::uint32_t peer = 0;
};

struct EngineConfig {
  std::size_t workers = 1;
  /// The contexts, identity and trust of the run's TLS connections (transport::TlsSetup::make
  /// for tls_uses(plan)); null when the profile has none.
  std::shared_ptr<const transport::TlsSetup> tls;
  std::uint64_t seed = 1;
  std::uint32_t token = 0;  ///< identifies this run on data connections (see tokens())
  /// A master: its slaves (slave i's connections carry token + i). A slave: 1.
  std::uint32_t peers = 1;
  [[nodiscard]] transport::RunTokens tokens() const { return {token, peers}; }
  /// A data connection whose header has not arrived within this time is closed.
  std::chrono::milliseconds header_timeout{5000};
  /// The most a step's end (end_txn) waits, in all, for workers that are runnable but make no
  /// progress: they wait for a CPU, not for the peer (see Engine::arm_quiescence).
  std::chrono::milliseconds starved_grace{2000};
  /// Master: remotehost (as written) -> target. Slave: ignored when `peer` is set.
  std::map<std::string, HostTarget> targets;
  /// Slave: every connect goes back to the master here.
  std::optional<HostTarget> peer;
  /// Address the data listeners bind to.
  boost::asio::ip::address listen_address;
  /// The slave side: duration transactions run until end_txn() (the master's deadline decides),
  /// and rate pacing is left to the master (the slave only answers).
  bool slave_side = false;
  /// After a duration deadline, how long in-flight operations may finish before being cut (so that
  /// both ends count the same bytes).
  /// One second covers a round trip even at 10000 connections on two cores (~160 ms measured);
  /// only an operation stuck on a dead or stalled peer waits that long.
  std::chrono::nanoseconds drain_grace = std::chrono::seconds(1);
  /// The drain is renewed by drain_grace while operations still complete, up to this long after
  /// the deadline (50,000 connections each waiting for its answer on two cores take seconds).
  std::chrono::nanoseconds drain_limit = std::chrono::seconds(8);
  /// This engine runs strand s of every group only when s % shard_count == shard_index; the other
  /// strands run in sibling processes (the same plan, another shard_index).
  std::uint32_t shard_index = 0;
  std::uint32_t shard_count = 1;
  /// Off: no clock reads and no histogram updates per operation (to measure what they cost).
  bool record_latency = true;
  /// Off: no TCP_INFO reads at transactions' or intervals' ends (to measure what they cost).
  bool sample_tcp = true;
  /// On: each strand also counts its own operations, bytes and iterations
  /// (results::GroupResult::strand_counts, uperf's -T). Off: a flag read per count, nothing more.
  bool count_strands = false;
  /// Tests only: when set, every connect makes this in-memory connection instead of a socket
  /// (called on the connecting strand's worker thread).
  std::function<transport::MemoryConnection(const boost::asio::any_io_executor&,
                                            const transport::ConnectionHeader&)>
      connect_in_memory;
  /// Called on a worker thread when every local strand has finished transaction `txn`.
  std::function<void(std::size_t txn)> on_txn_done;
  /// Called with a log line for every data connection a listener closed (a late header, a wrong
  /// token, not a volley header), on the listener's worker thread; the slave throttles them
  /// (core/throttled_log).
  std::function<void(const std::string&)> on_rejected_connection;
  IoEngine io = IoEngine::kEpoll;
};

class Engine {
 public:
  Engine(const Plan& plan, EngineConfig config);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Opens the data listeners the plan needs on `control` (the caller runs it). Returns an error
  /// sentence, or "" on success.
  std::string open_listeners(boost::asio::io_context& control);
  /// Requested port (0 = negotiated) -> the port actually bound.
  [[nodiscard]] std::map<std::uint16_t, std::uint16_t> listener_ports() const;
  /// Every negotiated listener (the first is listener_ports()[0]). More than one when the strands
  /// of this engine accept more connections than one listener's accept queue holds
  /// (net.core.somaxconn): the kernel drops the handshake's last ACK when the queue is full, the
  /// connecting side believes it is connected, and the connection arrives seconds later, after
  /// the step has ended. Peers spread their connects over these by strand index.
  [[nodiscard]] const std::vector<std::uint16_t>& negotiated_ports() const {
    return negotiated_ports_;
  }

  /// Slave: where connects go back to the master (known only once the master starts the run).
  void set_peer(HostTarget peer) { config_.peer = std::move(peer); }
  /// A master's shard in a child process: where its connects go (known only at the start).
  void set_targets(std::map<std::string, HostTarget> targets) {
    config_.targets = std::move(targets);
  }
  /// Strands of group `g` this engine runs (all of them unless sharded).
  [[nodiscard]] std::uint64_t local_strands(std::size_t g) const { return local_strands_[g]; }
  /// Starts the worker threads; every strand waits for release(0).
  void start();
  /// Lets every strand start transaction `txn` (and, on a master, starts its clock).
  void release(std::size_t txn);
  /// Slave: the master finished transaction `txn`. Waits until no strand has made progress, and
  /// none is thinking, for `quiet_for` (data still in flight lands), then cuts the strands still
  /// inside it. The master uses it too, with a longer `quiet_for`, when every slave has ended an
  /// iterations step its own strands still wait in.
  ///
  /// `peer_connected`: the TCP data connections the peer says it established to this engine's
  /// listeners since the run began (the master's end_step). While fewer have arrived, strands
  /// waiting to accept get a long quiet spell (a handshake the kernel dropped from a full accept
  /// queue arrives a retransmission later); once all have, the short one. Without it (the
  /// master's own use), any strand waiting to accept gets the long spell.
  ///
  /// `peer_written` (a slave: what the master wrote per connection in the step, its `written`
  /// before end_step): every strand is told the peer ended the step (CutReason::kPeerEnded) and
  /// ends by itself what nothing can complete, so a correct profile's step ends without the quiet
  /// spell; the spell stays as the bound on what cannot be known to complete (a datagram, a
  /// connection the kernel may still bring) and on a peer that does not play its part.
  void end_txn(std::size_t txn, std::chrono::milliseconds quiet_for = std::chrono::milliseconds(30),
               std::optional<std::uint64_t> peer_connected = std::nullopt,
               std::optional<std::vector<ConnectionBytes>> peer_written = std::nullopt);
  /// TCP data connections this engine's listeners handed to its strands since the run began
  /// (any thread; relaxed). Compared with the peer's count at the end of a step.
  [[nodiscard]] std::uint64_t accepted_connections() const {
    return accepted_tcp_.load(std::memory_order_relaxed);
  }
  /// Whether one of this engine's TCP data listeners is bound to `port` (after open_listeners).
  [[nodiscard]] bool listens_on(std::uint16_t port) const { return tcp_ports_.count(port) != 0; }
  /// The steps whose quiescence cut took the long accept spell (controlling thread): a step that
  /// had every connection its peer established is not among them.
  [[nodiscard]] std::uint64_t long_accept_waits() const { return long_accept_waits_; }
  /// Master: the TCP data connections its strands established since the run began, per
  /// remotehost (as in `targets`) and data port, up to the last step every worker finished.
  /// Controlling thread, after on_txn_done.
  [[nodiscard]] std::map<std::pair<std::string, std::uint16_t>, std::uint64_t> connected() const;
  /// The last step end_txn() cut after its quiet spell (controlling thread).
  [[nodiscard]] std::optional<std::size_t> quiet_cut() const { return quiet_cut_; }
  /// Whether that cut found every strand still in the step waiting in an accept, with every
  /// connection the peer said it established taken (end_txn's peer_connected): what they waited
  /// for was never made (the peer's connects failed, which its own counts say), not lost.
  [[nodiscard]] bool quiet_cut_only_accepts() const { return quiet_cut_only_accepts_; }
  /// Slave: the TCP data connections its strands established to its master since the run began,
  /// up to the last step every worker finished (the master's end of an accept step).
  [[nodiscard]] std::uint64_t connected_to_peer() const;
  /// After on_txn_done(txn): what the strands wrote on each connection they still have open
  /// during that step (what the peer's drain waits for). Controlling thread.
  std::vector<ConnectionBytes> take_step_written();
  /// The end-of-step drain (src/engine/step_drain.cpp), between on_txn_done(txn) and the next
  /// release: every strand reads on each of its connections in `peer_written` until it has all
  /// the peer wrote there during step `txn` (counted as that step's bytes read), or `deadline`.
  /// Returns at once; `done` runs later on `reply_on` with the connections left short.
  void drain(std::size_t txn, const std::vector<ConnectionBytes>& peer_written,
             std::chrono::steady_clock::time_point deadline, boost::asio::io_context& reply_on,
             std::function<void(std::vector<DrainShortfall>)> done);
  /// Cuts everything and lets every strand run to the end without doing work (Ctrl-C, peer lost).
  void stop();
  /// Joins the workers (after the last on_txn_done, or after stop()) and merges their results.
  results::RunResult finish();

  /// Operations and system calls completed so far on all workers, plus data connections routed
  /// to them (any thread; relaxed, for progress checks).
  [[nodiscard]] std::uint64_t progress() const;
  /// Data connections accepted on one worker and handed over to the worker of their strand (any
  /// thread; relaxed). Zero when every peer connects to its strand's own port (port_for()).
  [[nodiscard]] std::uint64_t handed_over() const {
    return handed_over_.load(std::memory_order_relaxed);
  }
  /// Some strand is inside a think (any thread; relaxed).
  [[nodiscard]] bool thinking() const;
  /// Takes the counters gathered since the previous take from every worker, without waiting:
  /// returns at once, and `done` later runs on `reply_on` (the controlling thread's context) with
  /// their sum. Takes complete in the order they were made. A take still outstanding when the
  /// engine is destroyed is dropped; after finish() every take made before it has been posted.
  void take_interval(boost::asio::io_context& reply_on,
                     std::function<void(std::vector<results::SlotStats>)> done);

  [[nodiscard]] const Plan& plan() const { return plan_; }
  [[nodiscard]] const EngineConfig& config() const { return config_; }

 private:
  /// A data connection whose header a listener of worker `accepted_on` read (on that worker's
  /// thread): to its strand, on this worker or handed over to the strand's.
  void route(std::uint32_t accepted_on, const transport::ConnectionHeader& header,
             boost::asio::ip::tcp::socket socket);
  /// Posts close() to each data listener's worker (UDP listeners close here).
  void close_listeners();
  void route_udp(const transport::ConnectionHeader& header, boost::asio::ip::udp::socket socket);
  void arm_quiescence(std::size_t txn, std::uint64_t last_progress, int quiet_polls,
                      int polls_needed);
  /// Group `g`'s strands' own counts, by strand index (EngineConfig::count_strands; empty when
  /// off); after the workers are joined.
  [[nodiscard]] std::vector<results::StrandCounts> strand_counts(std::size_t g) const;

  const Plan& plan_;
  EngineConfig config_;
  /// What the workers report and ask (src/engine/step_ledger.hpp); before workers_, which use it.
  std::unique_ptr<StepLedger> ledger_;
  /// Per step, the connections its drain found level (DrainOutcome::read_exactly); written on
  /// the controlling thread as each drain ends, read by finish().
  std::vector<std::uint64_t> read_exactly_;
  std::vector<std::unique_ptr<Worker>> workers_;
  /// (group, strand) -> (worker, index on that worker); strand ids are dense per group.
  /// A strand of another shard has worker kNotHere.
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> placement_;
  static constexpr std::uint32_t kNotHere = UINT32_MAX;
  std::vector<std::uint64_t> local_strands_;  ///< per group
  struct WorkerListener {
    std::uint32_t worker;  ///< whose thread accepts and reads headers
    std::unique_ptr<transport::DataListener> listener;
  };
  std::vector<WorkerListener> listeners_;
  std::vector<std::unique_ptr<transport::UdpListener>> udp_listeners_;
  std::map<std::uint16_t, std::uint16_t> listener_ports_;
  std::vector<std::uint16_t> negotiated_ports_;
  boost::asio::io_context* control_ = nullptr;
  std::unique_ptr<boost::asio::steady_timer> quiesce_timer_;
  std::uint64_t quiesce_generation_ = 0;
  std::optional<std::size_t> quiet_cut_;  ///< which end_txn() the pending poll belongs to
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for late timer handlers
  std::atomic<bool> stopped_{false};
  std::atomic<std::uint64_t> routed_{0};         ///< data connections handed to strands
  std::atomic<std::uint64_t> handed_over_{0};    ///< of those, accepted on another worker
  std::atomic<std::uint64_t> accepted_tcp_{0};   ///< of those, TCP (UDP hellos are not counted)
  std::set<std::uint16_t> tcp_ports_;            ///< every TCP data listener's bound port
  std::optional<std::uint64_t> peer_connected_;  ///< the pending end_txn()'s peer count
  std::uint64_t long_accept_waits_ = 0;
  /// Quiescence polls of the current step that found a worker runnable without progress.
  std::int64_t starved_polls_ = 0;
  bool quiet_cut_only_accepts_ = false;
  std::size_t active_workers_ = 0;
  bool started_ = false;
  bool finished_ = false;
};

}  // namespace volley::engine
