#pragma once
// The master's run, behind MasterRun: what the script (master_run.cpp) shares with its event
// handlers, each slave's session, and the phases of the script as member coroutines:
// master_reach.cpp (reach and load the slaves, build the local side), master_steps.cpp (start,
// release and end each step), master_events.cpp (one event at a time, each slave's messages
// through the session table), master_collect.cpp (results, the sides' reports, goodbyes).
// Thread: the control io_context.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "volley/control/channel.hpp"
#include "volley/control/child_set.hpp"
#include "volley/control/event_queue.hpp"
#include "volley/control/handshake.hpp"
#include "volley/control/interval_wire.hpp"
#include "volley/control/master_run.hpp"
#include "volley/control/session.hpp"
#include "volley/engine/engine.hpp"
#include "volley/sampling/cpu_sampler.hpp"
#include "volley/sampling/kernel_counters.hpp"
#include "volley/sampling/nic_sampler.hpp"

namespace volley::control {

using MasterClock = std::chrono::steady_clock;

/// After Ctrl-C, how long the slaves (and the master's child processes) have to hand over their
/// figures: short, so that an interrupted run ends within a second; one that has not answered by
/// then is reported missing.
inline constexpr auto kInterruptedResultsTimeout = std::chrono::milliseconds(500);

/// Now, in ns since the Unix epoch: the report's wall-clock times.
inline std::int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// What the run's script reacts to (a namespace of their own: a slave's session has its own).
namespace master_events {

struct SlaveMessage {
  std::size_t slave = 0;
  nlohmann::json message = {};
};
struct SlaveLost {
  std::size_t slave = 0;
  ChannelError error = {};
};
struct ReaderExited {
  std::size_t slave = 0;
};
struct LocalStepDone {
  std::size_t step = 0;
};
struct LocalDrained {
  std::size_t step = 0;
  std::vector<engine::DrainShortfall> shortfalls = {};
};
struct Tick {};
struct IntervalTick {};
struct Interrupt {};
struct ChildMessage {
  std::size_t child = 0;
  nlohmann::json message = {};
};
struct ChildLost {
  std::size_t child = 0;
  ChannelError error = {};
};

using MasterEvent = std::variant<SlaveMessage, SlaveLost, ReaderExited, LocalStepDone, LocalDrained,
                                 Tick, IntervalTick, Interrupt, ChildMessage, ChildLost>;

}  // namespace master_events
using master_events::MasterEvent;

/// The master's session with one slave. Its phase (session.hpp) moves with what the master sends
/// it and what it answers; the channel's own state (open, lost) is apart from it.
struct SlaveSession {
  SlaveAddress address = {};
  std::unique_ptr<Channel> channel = {};
  PeerPhase phase = PeerPhase::kGreeting;
  boost::asio::ip::address data_address = {};
  bool reader_alive = false;
  bool lost = false;
  AnnouncedLimits limits = {};  ///< from the slave's hello
  std::optional<std::map<std::uint16_t, std::uint16_t>> ports = {};
  std::optional<std::size_t> steps_done = {};  ///< highest step reported done
  std::optional<nlohmann::json> results = {};
  MasterClock::time_point last_heard = MasterClock::now();
  MasterClock::time_point last_ping = MasterClock::now();
  std::string trouble = {};  ///< why it failed the run (lost, silent, late), for its report row
  /// The end of a step: what the slave wrote per connection in the step ending (its `written`
  /// messages), and the last step its drain finished.
  std::vector<engine::ConnectionBytes> written = {};
  std::optional<std::size_t> steps_drained = {};
  std::vector<std::uint16_t> shard_ports = {};  ///< a slave spread over processes: one port each
  std::uint32_t data_mask = 0;           ///< from the handshake: masks the run token in `load`
  std::uint64_t intervals_answered = 0;  ///< its interval_counts so far (they come in order)
  /// Its TCP data connections to the master since the run began, as of its last step_done
  /// (absent from a slave older than this key).
  std::optional<std::uint64_t> connected_to_master = {};
  /// The fingerprint of the certificate its TLS accepts show (from its `loaded`); empty without.
  std::string tls_fingerprint = {};
  std::string io = {};  ///< the engine the slave said it runs ("loaded"), empty if it did not
};

struct MasterRun::State {
  State(boost::asio::io_context& io, const MasterSettings& run_settings,
        report::RunReport& run_report)
      : context(io),
        settings(run_settings),
        report(run_report),
        events(io),
        ticker(io),
        interval_timer(io) {}

  // --- the script's phases (each returns with `failure` set when the run cannot go on) ---
  void begin_report();
  void arm_tick();
  void arm_interval();
  boost::asio::awaitable<void> reach_slaves();
  boost::asio::awaitable<void> load_slaves();
  boost::asio::awaitable<void> build_local_side();
  boost::asio::awaitable<void> start_steps();
  /// Releases step `step` on every side and ends it; false when the run stops here.
  boost::asio::awaitable<bool> run_step(std::size_t step);
  boost::asio::awaitable<void> finish_steps();
  boost::asio::awaitable<void> collect();
  boost::asio::awaitable<void> say_goodbye();

  // --- the steps' parts (master_steps.cpp) ---
  boost::asio::awaitable<bool> wait_for_local_step(std::size_t step);
  boost::asio::awaitable<void> send_step_end(std::size_t step);
  boost::asio::awaitable<bool> wait_for_slaves_step_done(std::size_t step);
  boost::asio::awaitable<void> drain_step(std::size_t step);
  void measure_timed_end();
  [[nodiscard]] MasterClock::duration local_step_limit(std::size_t step) const;
  [[nodiscard]] std::optional<std::uint64_t> slaves_connected_to_master() const;
  /// The fingerprints the slaves announced for their TLS accepts: what TLS connects pin.
  [[nodiscard]] std::vector<std::string> slave_fingerprints() const;

  // --- the results' parts (master_collect.cpp) ---
  boost::asio::awaitable<void> finish_children();
  void finish_local_result();
  void add_slave_reports();

  // --- events (master_events.cpp) ---
  boost::asio::awaitable<void> handle(MasterEvent event);
  void on_slave_message(std::size_t i, const nlohmann::json& m);
  void on_interrupt();
  /// Ctrl-C, as an event: handled in its turn, between two others.
  void push_interrupt();
  void on_interval_tick();
  boost::asio::awaitable<void> on_tick();
  /// Handles every event already queued, without waiting for more.
  boost::asio::awaitable<void> absorb_queued();
  /// Waits, handling events, until `done()` holds, the run fails, or `timeout` passes; then
  /// handles what else had arrived. False when the run has failed.
  boost::asio::awaitable<bool> wait_until(std::function<bool()> done, MasterClock::duration timeout,
                                          std::string what);
  /// After Ctrl-C: handles events until `done()` holds or `deadline` passes, although the run
  /// has failed ("interrupted"); a timer wakes it at the deadline.
  boost::asio::awaitable<void> collect_until(std::function<bool()> done,
                                             MasterClock::time_point deadline);
  boost::asio::awaitable<bool> wait_for_wall_clock(std::int64_t at_ns);
  /// A slave's interval_counts, added to its interval's sample.
  void add_interval_part(std::size_t slave, const IntervalPart& part);
  /// Hands the intervals whose slaves have all answered (or are gone) to on_interval, in order.
  void show_intervals();

  // --- the slaves' sessions ---
  boost::asio::awaitable<void> send_to(std::size_t i, nlohmann::json m);
  boost::asio::awaitable<void> send_all(nlohmann::json m);
  /// A slave whose control connection is gone: nothing more is sent to it, and unless it had
  /// sent its results already the run fails naming it.
  void lose(std::size_t i, const ChannelError& error);
  void fail(std::string why);
  void trace(const std::string& what) const;
  void log(const std::string& line) const;
  [[nodiscard]] bool all_slaves(const std::function<bool(const SlaveSession&)>& pred) const;

  boost::asio::io_context& context;
  const MasterSettings& settings;
  report::RunReport& report;
  bool tracing = false;
  MasterClock::time_point trace_start = MasterClock::now();

  EventQueue<MasterEvent> events;
  boost::asio::steady_timer ticker;
  boost::asio::steady_timer interval_timer;
  bool ticking = true;
  std::vector<SlaveSession> slaves;
  std::optional<engine::Plan> plan;
  std::vector<engine::FileSet> file_sets;
  /// What the master's TLS accepts show (made with the plan when it has any; null otherwise).
  std::shared_ptr<const transport::TlsIdentity> tls_identity;
  std::uint32_t token = 0;  ///< the run token; slave i's data connections carry token + i
  std::unique_ptr<engine::Engine> engine;
  std::optional<std::size_t> local_done;
  std::optional<std::size_t> local_drained;
  /// An iterations step whose master strands were cut as stuck after every slave had ended it.
  std::optional<std::size_t> stuck_step;
  std::string failure;  ///< set once: why the run stops early
  bool interrupted = false;
  /// Ctrl-C that stopped a run still going (not one that came after a failure): where the
  /// measured part ends.
  std::optional<MasterClock::time_point> interrupted_at;
  bool running = false;  ///< between the first release and the end of the last step
  MasterClock::time_point run_start{};
  MasterClock::time_point last_interval{};
  std::size_t current_step = 0;
  std::vector<MasterClock::time_point> step_release;  ///< when each step was released locally
  /// The master's progress counter and when it last moved (sampled on each tick), so a step cut
  /// short by a failure is measured up to its last progress, not over the dead time after it.
  std::uint64_t last_progress = 0;
  MasterClock::time_point last_progress_at{};
  MasterClock::time_point last_tick = MasterClock::now();
  /// The step running when the run failed, if its local strands had not finished it.
  std::optional<std::size_t> failed_in_step;
  std::optional<sampling::CpuSample> cpu_before;
  std::optional<sampling::NicSample> nic_before;
  /// The host's kernel counters: this process samples them for every process of its side.
  sampling::KernelCounterWindow kernel;
  /// The master host's kernel counters interval by interval, from the first interval's start.
  std::optional<sampling::KernelCounterSeries> kernel_series;
  /// The master's side spread over processes (docs/architecture.md, "Processes"): this process
  /// runs shard 0, the children the others.
  std::uint32_t processes = 1;
  std::unique_ptr<ChildSet> children;
  std::int64_t rss_before = 0;  ///< this process's resident memory before its engine was built
  std::int64_t rss_after = 0;   ///< ... and when the last timed step ended
  /// Every slave is asked for its share of each interval (interval_wire.hpp). Interval n is
  /// report.intervals[n] (takes complete in order); a slave's part that comes before the
  /// master's own take waits in `early_parts`. An interval is shown (on_interval) once every
  /// slave still there has answered for it; after the run, whatever is left is shown.
  bool ask_intervals = false;
  std::uint64_t intervals_taken = 0;
  std::size_t intervals_shown = 0;
  bool show_all = false;
  std::map<std::uint64_t, std::vector<std::pair<std::size_t, IntervalPart>>> early_parts;
  /// Ctrl-C once the run had started: every side is told to stop and hand over what it
  /// measured until this deadline.
  bool collect_interrupted = false;
  MasterClock::time_point collect_deadline{};
};

}  // namespace volley::control
