#pragma once
// The slave's side of one session, behind SlaveServer: the events its script reacts to, the run
// it holds once a profile is loaded, and the session itself. slave_server.cpp holds the
// connection's life (accept, greeting, the event loop, the end), slave_messages.cpp the master's
// messages (judged by the session table, then by the step barrier), slave_load.cpp the load, and
// slave_relay.cpp a run spread over child processes.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "volley/control/channel.hpp"
#include "volley/control/child_set.hpp"
#include "volley/control/event_queue.hpp"
#include "volley/control/session.hpp"
#include "volley/control/slave_server.hpp"
#include "volley/control/step_barrier.hpp"
#include "volley/core/throttled_log.hpp"
#include "volley/engine/engine.hpp"
#include "volley/profile/model.hpp"
#include "volley/sampling/cpu_sampler.hpp"
#include "volley/sampling/kernel_counters.hpp"
#include "volley/sampling/nic_sampler.hpp"

namespace volley::control {

using SlaveClock = std::chrono::steady_clock;

/// Refusals a peer can cause by the thousand go to the log at most once per this.
inline constexpr auto kRefusalLogInterval = std::chrono::seconds(1);

/// What the session's script reacts to (a namespace of their own: the master has its own events).
namespace slave_events {

struct PeerMessage {
  nlohmann::json message;
};
struct PeerLost {
  ChannelError error;
};
struct LocalStepDone {
  std::size_t step;
};
struct LocalDrained {
  std::size_t step;
  std::vector<engine::DrainShortfall> shortfalls;
};
/// The engine's take for an `interval` request, ready to send (interval_wire.hpp).
struct IntervalTaken {
  nlohmann::json message;
};
struct Tick {};
struct Abort {};
/// A connection still owing its hello closed to make room for a newcomer (SourceQuota).
struct Evicted {
  transport::SourceQuota::Verdict why;
};
struct ReaderExited {};
struct ChildMessage {
  std::size_t child;
  nlohmann::json message;
};
struct ChildLost {
  std::size_t child;
  ChannelError error;
};
using SlaveEvent = std::variant<PeerMessage, PeerLost, LocalStepDone, LocalDrained, Tick, Abort,
                                ReaderExited, ChildMessage, ChildLost, IntervalTaken, Evicted>;

/// Everything a loaded profile needs on the slave, destroyed together when the run ends.

}  // namespace slave_events
using slave_events::SlaveEvent;

struct LoadedRun {
  profile::Profile profile;
  engine::Plan plan;
  /// What TLS accepts of this run (or of its child processes) show; null without any.
  std::shared_ptr<const transport::TlsIdentity> tls_identity;
  std::vector<std::size_t> timed;
  std::unique_ptr<engine::Engine> engine;
  /// Where the run stands in its steps, and whether the master's step messages fit.
  StepBarrier barrier{0};
  /// The end of a step: what the master wrote per connection in the step running (its `written`
  /// messages) and how long the drain may take (its end_step).
  std::vector<engine::ConnectionBytes> master_written;
  std::chrono::milliseconds drain_for{5000};
  /// The TCP data connections the master says it established to this process's listeners since
  /// the run began (its last end_step), which they must all have taken once the step is over.
  std::uint64_t master_connected = 0;
  std::optional<sampling::CpuSample> cpu_before;
  std::optional<sampling::NicSample> nic_before;
  std::optional<sampling::CpuUsage> cpu;
  std::optional<sampling::NicRates> nic;
  /// The host's kernel counters, sampled by the process that answers the master: a child of a
  /// run in processes leaves them to its parent (one sample per host, not per process).
  sampling::KernelCounterWindow kernel;
  bool host_counters = true;
  /// The same counters interval by interval, for the master's `interval` requests.
  std::optional<sampling::KernelCounterSeries> kernel_series;
  nlohmann::json system;  ///< this host's snapshot, read at load time (before the run)
  /// This process's record in the result: its name, and its resident memory before the run was
  /// built and when the last timed step ended.
  std::string process_name = "slave";
  std::int64_t rss_before = 0;
  std::int64_t rss_after = 0;
  /// A child process of a master (the profile as written) rather than a slave (its mirror).
  bool master_side = false;
  /// This run's data connections closed without a valid header (a stranger's, another run's, a
  /// late one): throttled lines while it runs, all of them counted when it ends. The run's own,
  /// so that nothing of it reaches another run's lines; shared with the listeners' callbacks.
  std::shared_ptr<core::ThrottledLog> strangers;
};

/// One master's session. Owned by serve()'s frame; the reader coroutine and the engine's
/// notifications point into it, so serve() waits for both to be gone before it ends.
struct SlaveServer::Session {
  Session(boost::asio::io_context& context, boost::asio::ip::tcp::socket socket,
          std::uint64_t session_id, std::function<void(const std::string&)> sink)
      : id(session_id),
        channel(std::move(socket)),
        events(context),
        ticker(context),
        refusals(std::move(sink), kRefusalLogInterval, "control messages refused") {}
  std::uint64_t id;
  Channel channel;
  EventQueue<SlaveEvent> events;
  boost::asio::steady_timer ticker;
  bool ticking = true;
  bool reader_alive = false;
  std::string who;
  boost::asio::ip::address local_address;
  boost::asio::ip::address master_address;
  std::unique_ptr<LoadedRun> run;
  /// The run spread over child processes (this session only relays): see on_proxied().
  std::unique_ptr<ChildSet> children;
  std::optional<std::size_t> reported_step;  ///< the last step_done relayed to the master
  /// A run in child processes: its timed steps, and the host's kernel counters over them.
  std::vector<std::size_t> proxied_timed;
  sampling::KernelCounterWindow proxied_kernel;
  /// Greeting until the hello (and, with a key, the authentication) went through.
  ServedPhase phase = ServedPhase::kGreeting;
  [[nodiscard]] bool greeted() const { return phase != ServedPhase::kGreeting; }
  std::string challenge;        ///< sent in our hello when a key is set
  std::uint32_t data_mask = 0;  ///< unmasks the run token in `load` (auth.hpp)
  SlaveClock::time_point last_heard = SlaveClock::now();
  SlaveClock::time_point started = SlaveClock::now();
  std::string end_reason;
  /// Messages refused (out of order, unknown, beyond a limit): the master can send thousands.
  core::ThrottledLog refusals;
};

}  // namespace volley::control
