#include "volley/control/master_run.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>
#include <random>
#include <type_traits>
#include <variant>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/system_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "volley/control/channel.hpp"
#include "volley/control/child_set.hpp"
#include "volley/control/codec.hpp"
#include "volley/control/event_queue.hpp"
#include "volley/control/handshake.hpp"
#include "volley/control/message.hpp"
#include "volley/control/interval_wire.hpp"
#include "volley/control/sampling_wire.hpp"
#include "volley/control/connected_wire.hpp"
#include "volley/control/step_bytes_wire.hpp"
#include "volley/core/host_port.hpp"
#include "volley/engine/engine.hpp"
#include "volley/results/result_json.hpp"
#include "volley/sampling/resident_memory.hpp"
#include "volley/process/process_count.hpp"
#include "volley/profile/flowop_hosts.hpp"
#include "volley/report/result_checks.hpp"
#include "volley/sampling/system_snapshot.hpp"

namespace volley::control {

namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
constexpr auto kTick = std::chrono::milliseconds(250);
constexpr auto kHandshakeTimeout = std::chrono::seconds(10);
constexpr auto kLoadTimeout = std::chrono::seconds(60);
constexpr auto kResultsTimeout = std::chrono::seconds(60);
/// After Ctrl-C, how long the slaves (and the master's child processes) have to hand over their
/// figures: short, so that an interrupted run ends within a second; one that has not answered by
/// then is reported missing.
constexpr auto kInterruptedResultsTimeout = std::chrono::milliseconds(500);
/// In an iterations step every slave has ended its share, and the master's strands have made no
/// progress (and none thinks) for this long: what they wait for will not come.
constexpr auto kStuckAfter = std::chrono::milliseconds(500);

struct SlaveMessage {
  std::size_t slave;
  json message;
};
struct SlaveLost {
  std::size_t slave;
  ChannelError error;
};
struct ReaderExited {
  std::size_t slave;
};
struct LocalStepDone {
  std::size_t step;
};
struct LocalDrained {
  std::size_t step;
  std::vector<engine::DrainShortfall> shortfalls;
};
struct Tick {};
struct IntervalTick {};
struct Interrupt {};
struct ChildMessage {
  std::size_t child;
  json message;
};
struct ChildLost {
  std::size_t child;
  ChannelError error;
};

using MasterEvent = std::variant<SlaveMessage, SlaveLost, ReaderExited, LocalStepDone,
                                 LocalDrained, Tick, IntervalTick, Interrupt, ChildMessage, ChildLost>;

/// " (cut: group 'g' transaction 't' flowop 'recv' in 3 strands, ...)": the flowops of `step`
/// that were waiting when it was cut as stuck.
std::string stuck_flowops(const results::RunResult& result, std::size_t step) {
  std::vector<std::string> parts;
  for (const auto& g : result.groups) {
    if (step >= g.transactions.size()) continue;
    for (const auto& f : g.transactions[step].flowops) {
      if (f.stats.counters.expired == 0) continue;
      parts.push_back(fmt::format("group '{}' transaction '{}' flowop '{}' in {} strand{}", g.name,
                                  g.transactions[step].name, f.type, f.stats.counters.expired,
                                  f.stats.counters.expired == 1 ? "" : "s"));
    }
  }
  return parts.empty() ? std::string() : fmt::format(" (cut: {})", fmt::join(parts, "; "));
}

/// One line of the control trace (VOLLEY_TRACE_CONTROL) for an event the run handles.
std::string describe_event(const MasterEvent& event) {
  return std::visit(
      [](const auto& e) -> std::string {
        using E = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<E, SlaveMessage>) {
          return fmt::format("slave {}: {}", e.slave, text_field(e.message, "type"));
        } else if constexpr (std::is_same_v<E, SlaveLost>) {
          return fmt::format("slave {} lost: {}", e.slave, e.error.message);
        } else if constexpr (std::is_same_v<E, ReaderExited>) {
          return fmt::format("slave {}: reader exited", e.slave);
        } else if constexpr (std::is_same_v<E, LocalStepDone>) {
          return fmt::format("local strands ended step {}", e.step);
        } else if constexpr (std::is_same_v<E, LocalDrained>) {
          return fmt::format("local drain of step {} over ({} short)", e.step, e.shortfalls.size());
        } else if constexpr (std::is_same_v<E, Tick>) {
          return "tick";
        } else if constexpr (std::is_same_v<E, IntervalTick>) {
          return "interval";
        } else if constexpr (std::is_same_v<E, Interrupt>) {
          return "interrupt";
        } else if constexpr (std::is_same_v<E, ChildMessage>) {
          return fmt::format("child {}: {}", e.child, text_field(e.message, "type"));
        } else {
          return fmt::format("child {} lost: {}", e.child, e.error.message);
        }
      },
      event);
}

std::int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

/// Everything the run script shares with its event handlers. Lives as long as the MasterRun.
struct MasterRun::State {
  explicit State(asio::io_context& context) : events(context), ticker(context), interval_timer(context) {}

  struct Slave {
    SlaveAddress address;
    std::unique_ptr<Channel> channel;
    asio::ip::address data_address;
    bool reader_alive = false;
    bool lost = false;
    bool greeted = false;
    AnnouncedLimits limits;  ///< from the slave's hello
    std::optional<std::map<std::uint16_t, std::uint16_t>> ports;
    std::optional<std::size_t> steps_done;  ///< highest step reported done
    std::optional<json> results;
    Clock::time_point last_heard = Clock::now();
    Clock::time_point last_ping = Clock::now();
    std::string trouble;  ///< why it failed the run (lost, silent, late), for its report row
    /// The end of a step: what the slave wrote per connection in the step ending (its `written`
    /// messages), and the last step its drain finished.
    std::vector<engine::ConnectionBytes> written;
    std::optional<std::size_t> steps_drained;
    std::vector<std::uint16_t> shard_ports = {};  ///< a slave spread over processes: one port each
    std::uint32_t data_mask = 0;  ///< from the handshake: masks the run token in `load`
    std::uint64_t intervals_answered = 0;  ///< its interval_counts so far (they come in order)
    /// Its TCP data connections to the master since the run began, as of its last step_done
    /// (absent from a slave older than this key).
    std::optional<std::uint64_t> connected_to_master;
  };

  EventQueue<MasterEvent> events;
  asio::steady_timer ticker;
  asio::steady_timer interval_timer;
  bool ticking = true;
  std::vector<Slave> slaves;
  std::optional<engine::Plan> plan;
  std::unique_ptr<engine::Engine> engine;
  std::optional<std::size_t> local_done;
  std::optional<std::size_t> local_drained;
  /// An iterations step whose master strands were cut as stuck after every slave had ended it.
  std::optional<std::size_t> stuck_step;
  std::string failure;  ///< set once: why the run stops early
  bool interrupted = false;
  /// Ctrl-C that stopped a run still going (not one that came after a failure): where the
  /// measured part ends.
  std::optional<Clock::time_point> interrupted_at;
  bool running = false;  ///< between the first release and the end of the last step
  Clock::time_point run_start{};
  Clock::time_point last_interval{};
  std::size_t current_step = 0;
  std::vector<Clock::time_point> step_release;  ///< when each step was released locally
  /// The master's progress counter and when it last moved (sampled on each tick), so a step cut
  /// short by a failure is measured up to its last progress, not over the dead time after it.
  std::uint64_t last_progress = 0;
  Clock::time_point last_progress_at{};
  Clock::time_point last_tick = Clock::now();
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
  /// UDP runs ask the slaves for their datagram counts at each interval (interval_wire.hpp).
  /// Interval n is report_.intervals[n] (takes complete in order); a slave's part that comes
  /// before the master's own take waits in `early_parts`. An interval is shown (on_interval)
  /// once every slave still there has answered for it; after the run, whatever is left is shown.
  bool ask_intervals = false;
  std::uint64_t intervals_taken = 0;
  std::size_t intervals_shown = 0;
  bool show_all = false;
  std::map<std::uint64_t, std::vector<std::pair<std::size_t, IntervalPart>>> early_parts;
};

void MasterRun::add_interval_part(std::size_t slave, const IntervalPart& part) {
  report::IntervalSample& sample = report_.intervals.at(part.interval);
  if (!part.missing.empty()) {
    if (!sample.peers.missing.empty()) sample.peers.missing += "; ";
    sample.peers.missing += fmt::format("slave {}: {}", state_->slaves[slave].address.host, part.missing);
    return;
  }
  for (const TxnDatagrams& t : part.txns) {
    report::add_peer_datagrams(report_.slot_names, t.group, t.txn, t.counts, sample);
  }
  for (const TxnTcp& t : part.tcp) report::add_peer_tcp(report_.slot_names, t.group, t.txn, t.tcp, sample);
  if (part.kernel) sample.kernel.push_back({state_->slaves[slave].address.host, *part.kernel});
  ++sample.peers.answered;
}

void MasterRun::show_intervals() {
  State& st = *state_;
  while (st.intervals_shown < report_.intervals.size()) {
    const std::size_t n = st.intervals_shown;
    report::IntervalSample& sample = report_.intervals[n];
    if (sample.peers.asked > 0) {
      std::vector<std::string> silent;
      for (const auto& s : st.slaves) {
        if (s.intervals_answered <= n) silent.push_back(s.address.host);
      }
      const bool waiting = std::any_of(st.slaves.begin(), st.slaves.end(), [n](const State::Slave& s) {
        return s.intervals_answered <= n && !s.lost;
      });
      if (waiting && !st.show_all) return;
      if (!silent.empty()) {
        if (!sample.peers.missing.empty()) sample.peers.missing += "; ";
        sample.peers.missing += fmt::format("no counts from slave {}", fmt::join(silent, ", "));
      }
    }
    ++st.intervals_shown;
    report::settle_peer_tcp(sample);
    if (settings_.on_interval) settings_.on_interval(report_, sample);
  }
}

MasterRun::MasterRun(asio::io_context& context, MasterSettings settings)
    : context_(context), settings_(std::move(settings)), state_(std::make_unique<State>(context)) {}

MasterRun::~MasterRun() = default;

void MasterRun::interrupt() { state_->events.push(Interrupt{}); }

awaitable<void> MasterRun::run() {
  State& st = *state_;
  auto log = [this](const std::string& line) {
    if (settings_.log) settings_.log(line);
  };
  // The control trace: off unless settings_.trace is set (VOLLEY_TRACE_CONTROL), and then one
  // line per event handled, message sent and step phase, with the time since the run began.
  const bool tracing = static_cast<bool>(settings_.trace);
  const auto trace_start = Clock::now();
  auto trace = [&](const std::string& what) {
    settings_.trace(fmt::format("{:9.3f} {}", std::chrono::duration<double>(Clock::now() - trace_start).count(), what));
  };
  auto fail = [&st, &trace, tracing](std::string why) {
    if (!st.failure.empty()) return;
    if (tracing) trace("run fails: " + why);
    st.failure = std::move(why);
    if (st.running && !(st.local_done && *st.local_done >= st.current_step)) {
      st.failed_in_step = st.current_step;
    }
  };
  const profile::Profile& profile = *settings_.profile;
  report_.volley_version = VOLLEY_VERSION;
  report_.profile_name = profile.name;
  report_.profile_path = settings_.profile_file;
  report_.variables = settings_.variables;
  report_.seed = settings_.seed;
  report_.workers = settings_.workers;
  report_.start_unix_ns = unix_now_ns();
  report_.master.role = "master";
  report_.master.host = "master";
  // Before the run, so reading /proc and /sys and running tc does not disturb what is measured.
  report_.master.system = sampling::read_system_snapshot();

  // Housekeeping ticks: pings, silence checks, handshake deadlines.
  std::function<void()> arm_tick = [&] {
    st.ticker.expires_after(kTick);
    st.ticker.async_wait([&](const boost::system::error_code& ec) {
      if (ec || !st.ticking) return;
      st.events.push(Tick{});
      arm_tick();
    });
  };
  arm_tick();

  // A slave whose control connection is gone: nothing more is sent to it, and unless it had
  // sent its results already the run fails naming it. Whichever finds it first, the reader or a
  // send, says why.
  auto lose = [&](std::size_t i, const ChannelError& error) {
    auto& s = st.slaves[i];
    if (s.lost) return;
    s.lost = true;
    if (!s.results) {
      std::string why = fmt::format("lost slave {}: {}", s.address.host, error.message);
      if (s.trouble.empty()) s.trouble = why;
      fail(std::move(why));
    }
  };

  auto send_to = [&](std::size_t i, json m) -> awaitable<void> {
    auto& s = st.slaves[i];
    if (!s.channel || !s.channel->is_open() || s.lost) co_return;
    const std::string type = tracing ? text_field(m, "type") : std::string();
    auto sent = co_await s.channel->send(std::move(m));
    auto* e = std::get_if<ChannelError>(&sent);
    if (tracing) trace(fmt::format("sent {} to slave {}: {}", type, i, e ? e->message : "ok"));
    if (e) lose(i, *e);
  };
  auto send_all = [&](json m) -> awaitable<void> {
    for (std::size_t i = 0; i < st.slaves.size(); ++i) co_await send_to(i, m);
  };

  // Applies one event to the state. Returns when the event is absorbed.
  auto handle = [&](MasterEvent event) -> awaitable<void> {
    if (tracing && !std::holds_alternative<Tick>(event)) trace(describe_event(event));
    if (auto* m = std::get_if<SlaveMessage>(&event)) {
      auto& s = st.slaves[m->slave];
      s.last_heard = Clock::now();
      const std::string type = text_field(m->message, "type");
      if (!s.greeted && type == "error") {
        // The slave refused our greeting (a protocol version mismatch, say): its sentence says why.
        fail(fmt::format("slave {}: {}", s.address.host, text_field(m->message, "message")));
      } else if (!s.greeted) {
        if (auto problem = check_hello(m->message, s.channel->peer()); !problem.empty()) {
          fail(problem);
        } else {
          s.greeted = true;
          s.limits = announced_limits(m->message);
        }
      } else if (type == "loaded") {
        s.ports = ports_from_json(m->message.value("ports", json::object()));
        // A slave spread over processes: one negotiated port per process.
        s.shard_ports = loaded_listeners(m->message);
      } else if (type == "rejected") {
        fail(fmt::format("slave {} could not set up the run:\n{}", s.address.host,
                         text_field(m->message, "message")));
      } else if (type == "step_done") {
        if (const auto step = uint_field(m->message, "step")) {
          s.steps_done = static_cast<std::size_t>(*step);
          s.connected_to_master = uint_field(m->message, "connected_to_master");
        } else {
          fail(fmt::format("slave {} sent a malformed step_done", s.address.host));
        }
      } else if (type == "written") {
        const std::size_t before = s.written.size();
        if (!append_written(m->message, s.written)) {
          fail(fmt::format("slave {} sent a malformed written message", s.address.host));
        }
        // The master numbers its connections per slave: these are slave m->slave's.
        for (std::size_t k = before; k < s.written.size(); ++k) {
          s.written[k].peer = static_cast<std::uint32_t>(m->slave);
        }
      } else if (type == "drained") {
        std::vector<engine::DrainShortfall> shortfalls;
        std::uint64_t total = 0;
        const auto step = uint_field(m->message, "step");
        if (!step || !shortfalls_from(m->message, shortfalls, total)) {
          fail(fmt::format("slave {} sent a malformed drained message", s.address.host));
        } else {
          s.steps_drained = static_cast<std::size_t>(*step);
          if (total > 0) {
            std::string why = describe_shortfalls(fmt::format("slave {}", s.address.host),
                                                  static_cast<std::size_t>(*step), shortfalls,
                                                  total, *st.plan);
            s.trouble = why;
            fail(std::move(why));
          }
        }
      } else if (type == "interval_counts") {
        const auto part = interval_part_from_json(m->message);
        if (!part || part->interval != s.intervals_answered || part->interval >= st.intervals_taken) {
          fail(fmt::format("slave {} sent a malformed or unexpected interval_counts message", s.address.host));
        } else {
          ++s.intervals_answered;
          if (part->interval < st.intervals_shown) {
            // Too late: the interval was shown without it (its slave counted missing there).
          } else if (part->interval < report_.intervals.size()) {
            add_interval_part(m->slave, *part);
          } else {
            st.early_parts[part->interval].emplace_back(m->slave, std::move(*part));
          }
          show_intervals();
        }
      } else if (type == "results") {
        s.results = m->message;
      } else if (type == "error") {
        fail(fmt::format("slave {}: {}", s.address.host, text_field(m->message, "message")));
      } else if (type == "abort") {
        fail(fmt::format("slave {} aborted the run: {}", s.address.host,
                         text_field(m->message, "reason")));
      } else if (type != "ping") {
        fail(fmt::format("slave {} sent an unexpected '{}' message", s.address.host, type));
      }
    } else if (auto* lost = std::get_if<SlaveLost>(&event)) {
      lose(lost->slave, lost->error);
      show_intervals();  // the intervals it had not answered for go without it
    } else if (auto* child = std::get_if<ChildMessage>(&event)) {
      if (st.children) {
        if (auto problem = st.children->note(child->child, child->message); !problem.empty()) fail(problem);
      }
    } else if (auto* child_lost = std::get_if<ChildLost>(&event)) {
      if (st.children) fail(st.children->lost(child_lost->child, child_lost->error));
    } else if (auto* exited = std::get_if<ReaderExited>(&event)) {
      st.slaves[exited->slave].reader_alive = false;
    } else if (auto* done = std::get_if<LocalStepDone>(&event)) {
      st.local_done = done->step;
    } else if (auto* drained = std::get_if<LocalDrained>(&event)) {
      st.local_drained = drained->step;
      if (!drained->shortfalls.empty()) {
        fail(describe_shortfalls("master", drained->step, drained->shortfalls,
                                 drained->shortfalls.size(), *st.plan));
      }
    } else if (std::holds_alternative<Interrupt>(event)) {
      if (!st.interrupted && st.failure.empty()) {
        st.interrupted_at = Clock::now();
        // In the timed part: its CPU and NIC figures end here, as its rates do.
        if (st.running && st.cpu_before && !report_.master.cpu) {
          st.rss_after = sampling::resident_bytes();
          report_.master.cpu = sampling::cpu_usage(*st.cpu_before, sampling::sample_cpu());
          report_.master.nic = sampling::nic_rates(*st.nic_before, sampling::sample_nics());
          st.kernel.finish();
          report_.master.kernel = st.kernel.deltas();
        }
      }
      st.interrupted = true;
      fail("interrupted");
    } else if (std::holds_alternative<IntervalTick>(event)) {
      if (st.running && st.engine) {
        const auto now = Clock::now();
        report::IntervalSample sample;
        sample.start_unix_ns = unix_now_ns() - std::chrono::duration_cast<std::chrono::nanoseconds>(now - st.last_interval).count();
        sample.since_run_start = std::chrono::duration_cast<std::chrono::nanoseconds>(st.last_interval - st.run_start);
        sample.length = std::chrono::duration_cast<std::chrono::nanoseconds>(now - st.last_interval);
        sample.step = st.current_step;
        if (st.kernel_series) sample.kernel.push_back({"master", st.kernel_series->next()});
        st.last_interval = now;
        const std::uint64_t n = st.intervals_taken++;
        if (st.ask_intervals) {
          sample.peers.asked = static_cast<std::size_t>(std::count_if(
              st.slaves.begin(), st.slaves.end(), [](const State::Slave& s) { return !s.lost; }));
        }
        // The workers answer on this thread later; samples arrive in the order they were taken.
        // Only counters and a few percentiles are kept: the series must not grow with the
        // histograms' size. The full histograms go to the latency log, if asked for, and go.
        st.engine->take_interval(context_, [this, n, sample = std::move(sample)](
                                               std::vector<results::SlotStats> slots) mutable {
          std::map<std::uint64_t, std::vector<std::pair<std::size_t, IntervalPart>>>& early_parts =
              state_->early_parts;
          report::summarize_interval(report_.slot_names, slots, sample);
          report_.intervals.push_back(std::move(sample));
          if (const auto early = early_parts.find(n); early != early_parts.end()) {
            for (const auto& [slave, part] : early->second) add_interval_part(slave, part);
            early_parts.erase(early);
          }
          if (settings_.on_interval_histograms) {
            settings_.on_interval_histograms(report_, report_.intervals.back(), slots);
          }
          show_intervals();
        });
        // The slaves take theirs when this arrives: half a round trip later than the master's.
        if (st.ask_intervals) co_await send_all(interval_request(n));
      }
    } else if (std::holds_alternative<Tick>(event)) {
      const auto now = Clock::now();
      if (st.running && st.engine) {
        const std::uint64_t progress = st.engine->progress();
        if (progress != st.last_progress) {
          st.last_progress = progress;
          st.last_progress_at = now;
        }
      }
      // While steps run a dead link must be noticed within seconds; loading and reporting may
      // legitimately keep a slave busy longer.
      const auto silence_limit = st.running ? settings_.link_timeout : settings_.silence_timeout;
      // A tick far later than its 250 ms means this thread was held up itself: the slaves'
      // messages may be waiting behind it, unread. Judge silence on a later tick.
      const bool master_was_stalled = now - st.last_tick > 4 * kTick;
      st.last_tick = now;
      for (std::size_t i = 0; i < st.slaves.size(); ++i) {
        auto& s = st.slaves[i];
        if (!s.channel || !s.channel->is_open() || s.results) continue;
        if (!master_was_stalled && now - s.last_heard > silence_limit) {
          std::string why = fmt::format(
              "slave {} has been silent for {:.1f} s (the link or the slave is down)",
              s.address.host, std::chrono::duration<double>(now - s.last_heard).count());
          if (s.trouble.empty()) s.trouble = why;
          fail(std::move(why));
        } else if (s.greeted && now - s.last_ping >= settings_.ping_interval) {
          s.last_ping = now;
          json ping = message("ping");
          co_await send_to(i, std::move(ping));
        }
      }
    }
  };

  // Handles every event already queued, without waiting for more. A wait whose condition an
  // event met must not leave the events queued behind it for later: a lost slave's among them
  // would go unseen while the run sends to it (a killed slave: the master's strands end their
  // step on the data connections' resets, and the control connection's close, queued behind
  // that, must still fail the run at once rather than at the end of the step).
  auto absorb_queued = [&]() -> awaitable<void> {
    while (!st.events.empty()) co_await handle(co_await st.events.next());
  };

  // Waits, handling events, until `done()` holds, the run fails, or `timeout` passes; then
  // handles what else had arrived.
  auto wait_until = [&](auto done, std::chrono::steady_clock::duration timeout,
                        std::string what) -> awaitable<bool> {
    const auto deadline = Clock::now() + timeout;
    while (!done()) {
      if (!st.failure.empty()) co_return false;
      if (Clock::now() > deadline) {
        fail(fmt::format("timed out after {} s waiting for {}",
                         std::chrono::duration_cast<std::chrono::seconds>(timeout).count(), what));
        co_return false;
      }
      co_await handle(co_await st.events.next());
    }
    co_await absorb_queued();
    co_return st.failure.empty();
  };

  // After Ctrl-C: handles events until `done()` holds or `deadline` passes, although the run has
  // failed ("interrupted"); a timer wakes it at the deadline.
  auto collect_until = [&](auto done, Clock::time_point deadline) -> awaitable<void> {
    asio::steady_timer wake(context_);
    wake.expires_at(deadline);
    wake.async_wait([&st](const boost::system::error_code& ec) {
      if (!ec) st.events.push(Tick{});
    });
    while (!done() && Clock::now() < deadline) co_await handle(co_await st.events.next());
    wake.cancel();
    co_await asio::post(context_, asio::use_awaitable);  // let a cancelled handler finish
  };

  // --start-at: holds the first timed step until the wall clock reaches `at_ns`, still handling
  // events meanwhile (pings keep the slaves from timing out; a lost slave or Ctrl-C ends it).
  auto wait_for_wall_clock = [&](std::int64_t at_ns) -> awaitable<bool> {
    auto reached = std::make_shared<bool>(false);
    asio::system_timer timer(context_);
    timer.expires_at(std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::nanoseconds(at_ns))));
    timer.async_wait([&st, reached](const boost::system::error_code& ec) {
      if (ec) return;
      *reached = true;
      st.events.push(Tick{});
    });
    const bool ok = co_await wait_until([&] { return *reached; }, std::chrono::hours(25), "the start time");
    timer.cancel();
    co_await asio::post(context_, asio::use_awaitable);  // let a cancelled handler finish
    co_return ok;
  };

  // A step bounded by a duration ends on the master by its deadline plus the engine's drain grace;
  // beyond that plus step_grace something is broken, and the run says so instead of waiting.
  // A step bounded by iterations takes as long as its work does.
  auto local_step_limit = [&](std::size_t step) -> Clock::duration {
    std::chrono::nanoseconds longest{0};
    bool timed = false;
    for (const auto& g : st.plan->groups) {
      if (g.strands == 0 || step >= g.txns.size()) continue;
      if (const auto* d = std::get_if<profile::Duration>(&g.txns[step].bound)) {
        timed = true;
        longest = std::max(longest, std::chrono::nanoseconds(d->length));
      }
    }
    if (!timed) return std::chrono::hours(24 * 365);
    return longest + st.engine->config().drain_limit + settings_.step_grace;
  };

  auto all_slaves = [&](auto pred) {
    return std::all_of(st.slaves.begin(), st.slaves.end(), pred);
  };
  // The TCP data connections the slaves made to this engine's listeners, when every slave said
  // (its step_done) and this process holds all of the master's listeners (no child processes).
  auto slaves_connected_to_master = [&]() -> std::optional<std::uint64_t> {
    if (st.children) return std::nullopt;
    std::uint64_t sum = 0;
    for (const auto& s : st.slaves) {
      if (!s.connected_to_master) return std::nullopt;
      sum += *s.connected_to_master;
    }
    return sum;
  };

  // 1. Reach every slave.
  for (std::size_t i = 0; i < settings_.slaves.size() && st.failure.empty(); ++i) {
    const SlaveAddress& address = settings_.slaves[i];
    st.slaves.push_back(State::Slave{address, {}, {}, false, false, false, {}, {}, {}, {}, Clock::now(), Clock::now(), {}, {}, {}, {}, 0, 0, {}});
    tcp::resolver resolver(context_);
    auto [resolve_ec, endpoints] = co_await resolver.async_resolve(
        address.control_host, std::to_string(address.control_port), kAwait);
    if (resolve_ec) {
      fail(fmt::format("cannot resolve slave host '{}': {}", address.control_host, resolve_ec.message()));
      break;
    }
    tcp::socket socket(context_);
    asio::steady_timer guard(context_);
    guard.expires_after(settings_.connect_timeout);
    bool timed_out = false;
    guard.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      timed_out = true;
      boost::system::error_code ignored;
      socket.close(ignored);
    });
    auto [connect_ec, endpoint] = co_await asio::async_connect(socket, endpoints, kAwait);
    guard.cancel();
    co_await asio::post(context_, asio::use_awaitable);  // let the cancelled guard finish
    if (connect_ec) {
      fail(fmt::format("cannot reach slave '{}' at {}: {}{}", address.host,
                       core::format_host_port(address.control_host, address.control_port),
                       timed_out ? fmt::format("no answer within {} ms", settings_.connect_timeout.count())
                                 : connect_ec.message(),
                       connect_ec == asio::error::connection_refused
                           ? " (is `volley serve` running there?)" : ""));
      break;
    }
    st.slaves[i].data_address = endpoint.address();
    st.slaves[i].channel = std::make_unique<Channel>(std::move(socket));
    st.slaves[i].reader_alive = true;
    asio::co_spawn(
        context_,
        [&st, i, &key = settings_.key]() -> awaitable<void> {
          Channel& channel = *st.slaves[i].channel;
          // The greeting (and authentication) first, here: the channel must be keyed before
          // the slave's next frame is read.
          auto greeting = co_await master_handshake(channel, key);
          if (auto* greeted = std::get_if<MasterGreeting>(&greeting)) {
            if (greeted->keys) st.slaves[i].data_mask = greeted->keys->data_mask;
            st.events.push(SlaveMessage{i, std::move(greeted->slave_hello)});
          } else {
            // Nothing more is said to a slave that failed the handshake.
            channel.close();
            json refused = message("error", {{"message", std::get<std::string>(greeting)}});
            st.events.push(SlaveMessage{i, std::move(refused)});
            st.events.push(ReaderExited{i});
            co_return;
          }
          for (;;) {
            auto got = co_await channel.receive();
            if (auto* error = std::get_if<ChannelError>(&got)) {
              st.events.push(SlaveLost{i, std::move(*error)});
              break;
            }
            st.events.push(SlaveMessage{i, std::get<json>(std::move(got))});
          }
          st.events.push(ReaderExited{i});
        },
        asio::detached);
  }
  co_await wait_until([&] { return all_slaves([](const State::Slave& s) { return s.greeted; }); },
                      kHandshakeTimeout, "the slaves' greeting");

  // 2. Plan the master's side and have every slave load its mirror.
  std::uint32_t token = 0;
  std::vector<engine::FileSet> file_sets;
  if (st.failure.empty()) {
    core::Diagnostics diags;
    file_sets = engine::scan_file_sets(profile, diags);
    if (!diags.has_errors()) st.plan = engine::compile(profile, file_sets, diags);
    if (!st.plan) fail(diags.format(nullptr));
    const std::string random = random_bytes(sizeof token);
    std::memcpy(&token, random.data(), sizeof token);
    for (std::size_t i = 0; i < st.slaves.size() && st.failure.empty(); ++i) {
      // Slave i's data connections carry token + i (transport::RunTokens).
      const std::uint32_t its_token = token + static_cast<std::uint32_t>(i);
      LoadRequest load{settings_.profile_text, settings_.profile_file, settings_.variables,
                       st.slaves[i].address.host, settings_.seed, its_token ^ st.slaves[i].data_mask,
                       1, settings_.slave_workers, file_sets, settings_.record_latency,
                       settings_.sample_tcp};
      if (settings_.max_duration) load.max_duration_ns = settings_.max_duration->count();
      json load_message = to_json(load);
      // A load beyond the slave's limits would be cut off by a reset and its reason lost: say it
      // here, in the slave's words.
      const auto frame_bytes = encode_frame(load_message).size() - 4;
      if (auto problem = check_load_fits(st.slaves[i].limits, frame_bytes, load.profile_text.size());
          !problem.empty()) {
        fail(fmt::format("slave {}: {}", st.slaves[i].address.host, problem));
        break;
      }
      co_await send_to(i, std::move(load_message));
    }
    co_await wait_until([&] { return all_slaves([](const State::Slave& s) { return s.ports.has_value(); }); },
                        kLoadTimeout, "the slaves to load the profile");
  }

  // 3. Start both sides and step through the transactions together.
  if (st.failure.empty()) {
    engine::EngineConfig config;
    config.workers = settings_.workers;
    config.seed = settings_.seed;
    config.token = token;
    config.peers = static_cast<std::uint32_t>(std::max<std::size_t>(1, st.slaves.size()));
    config.record_latency = settings_.record_latency;
    config.sample_tcp = settings_.sample_tcp;
    for (std::size_t i = 0; i < st.slaves.size(); ++i) {
      const auto& s = st.slaves[i];
      const auto port = s.ports->count(0) != 0 ? s.ports->at(0) : std::uint16_t{0};
      config.targets[s.address.host] =
          engine::HostTarget{s.data_address, port, {}, static_cast<std::uint32_t>(i)};
    }
    // Each slave connects back to the master's address on its own control connection, and
    // slaves on different networks reach the master by different addresses: listen on all of
    // them (the run token keeps strangers out). IPv6's wildcard also takes IPv4 (dual stack).
    config.listen_address = asio::ip::address_v4::loopback();
    if (!st.slaves.empty()) {
      bool v6 = false;
      for (const auto& s : st.slaves) {
        boost::system::error_code ec;
        const auto local = s.channel->socket().local_endpoint(ec).address();
        v6 = v6 || (!ec && local.is_v6() && !local.to_v6().is_v4_mapped());
      }
      config.listen_address = v6 ? asio::ip::address(asio::ip::address_v6::any())
                                 : asio::ip::address(asio::ip::address_v4::any());
    }
    config.on_txn_done = [this](std::size_t step) {
      asio::post(context_, [this, step] { state_->events.push(LocalStepDone{step}); });
    };
    for (const auto& s : st.slaves) config.targets[s.address.host].shard_ports = s.shard_ports;
    st.processes = process::process_count(profile, *st.plan, process::machine_budget(settings_.processes));
    if (st.processes > 1) {
      config.shard_count = st.processes;
      ChildSetSettings children;
      children.executable = settings_.child_executable;
      children.master_side = true;
      children.first_shard = 1;
      children.shard_count = st.processes;
      children.workers = std::max<std::size_t>(1, (settings_.workers + st.processes - 1) / st.processes);
      config.workers = children.workers;
      auto spawned = ChildSet::spawn(context_, children);
      if (auto* problem = std::get_if<std::string>(&spawned)) {
        fail(*problem);
      } else {
        st.children = std::move(std::get<std::unique_ptr<ChildSet>>(spawned));
        LoadRequest load{settings_.profile_text, settings_.profile_file, settings_.variables, "",
                         settings_.seed, token, config.peers, children.workers, file_sets,
                         settings_.record_latency, settings_.sample_tcp};
        load.listen_address = config.listen_address.to_string();
        if (settings_.max_duration) load.max_duration_ns = settings_.max_duration->count();
        if (auto trouble = co_await st.children->load(std::move(load)); !trouble.empty()) fail(trouble);
        log(fmt::format("the master's side runs in {} processes", st.processes));
      }
    }
    st.rss_before = sampling::resident_bytes();
    st.engine = std::make_unique<engine::Engine>(*st.plan, std::move(config));
    if (auto problem = st.engine->open_listeners(context_); !problem.empty()) fail(problem);
  }
  if (st.failure.empty()) {
    const auto ports = st.engine->listener_ports();
    const std::uint16_t master_port = ports.count(0) != 0 ? ports.at(0) : 0;
    json start = message("start", {{"master_port", master_port}});
    // Slaves send strand s's connections to the master's process s % processes, spread over its
    // listeners (Engine::negotiated_ports()).
    std::vector<std::vector<std::uint16_t>> listeners = {st.engine->negotiated_ports()};
    if (st.children) {
      for (const auto& p : st.children->negotiated()) listeners.push_back(p);
    }
    if (const auto spread = spread_ports(listeners); spread.size() > 1) start["master_ports"] = spread;
    if (st.children) {
      json child_start = message("start", {{"master_port", 0},
                                           {"targets", targets_to_json(st.engine->config().targets)}});
      if (auto problem = co_await st.children->send_all(std::move(child_start)); !problem.empty()) fail(problem);
      st.children->listen(
          [&st](std::size_t i, json m) { st.events.push(ChildMessage{i, std::move(m)}); },
          [&st](std::size_t i, ChannelError e) { st.events.push(ChildLost{i, std::move(e)}); });
    }
    co_await send_all(std::move(start));
    st.engine->start();
    report_.timed_steps = engine::timed_steps(*st.plan);
    const profile::FlowopHosts hosts = profile::flowop_hosts(profile);
    for (const auto& info : st.plan->slots) {
      const auto& g = st.plan->groups[info.group];
      std::string name = fmt::format("{}/{}", engine::group_display_name(g, info.group),
                                     engine::txn_display_name(g.txns[info.txn], info.txn));
      if (info.flowop) name += "/" + g.txns[info.txn].ops[*info.flowop].type;
      if (info.uncorrected) name += "/uncorrected";
      std::string host;
      if (info.flowop && info.group < hosts.size() && info.txn < hosts[info.group].size() &&
          *info.flowop < hosts[info.group][info.txn].size()) {
        host = hosts[info.group][info.txn][*info.flowop];
      }
      report_.slot_names.push_back(
          {info.group, info.txn, info.flowop, info.uncorrected, std::move(name), std::move(host)});
    }
    st.run_start = Clock::now();
    st.last_interval = st.run_start;
    st.last_progress_at = st.run_start;
    st.step_release.assign(st.plan->txn_count, st.run_start);
    report_.start_unix_ns = unix_now_ns();
    st.running = true;
    // While steps run a slave that stops taking messages is lost as soon as a silent one is.
    for (auto& s : st.slaves) s.channel->set_send_timeout(settings_.link_timeout);
    std::function<void()> arm_interval = [&] {
      st.interval_timer.expires_after(settings_.interval);
      st.interval_timer.async_wait([&](const boost::system::error_code& ec) {
        if (ec || !st.running) return;
        st.events.push(IntervalTick{});
        arm_interval();
      });
    };
    // Processes: the live intervals would count this process's share only, so there are none
    // (the final result merges every process).
    if (settings_.interval.count() > 0 && !st.children) {
      st.kernel_series.emplace();
      arm_interval();
    }
    // Every slave has its host's kernel counters to give, and its UDP counts and TCP state.
    st.ask_intervals = !st.children;
    if (st.children) log("live intervals are off: the master's side runs in several processes");

    for (std::size_t step = 0; step < st.plan->txn_count && st.failure.empty(); ++step) {
      const bool first_timed = step == report_.timed_steps.front();
      const bool last_timed = step == report_.timed_steps.back();
      if (first_timed && settings_.start_at_unix_ns) {
        // Before current_step moves on, so intervals while waiting are not the timed step's.
        report_.start_at_unix_ns = settings_.start_at_unix_ns;
        if (!co_await wait_for_wall_clock(*settings_.start_at_unix_ns)) break;
      }
      st.current_step = step;
      if (first_timed) {
        st.cpu_before = sampling::sample_cpu();
        st.nic_before = sampling::sample_nics();
        st.kernel.start();
      }
      json proceed = message("proceed", {{"step", step}});
      if (st.children) {
        if (auto problem = co_await st.children->send_all(proceed); !problem.empty()) fail(problem);
      }
      co_await send_all(std::move(proceed));
      st.step_release[step] = Clock::now();
      st.engine->release(step);
      log(fmt::format("step {} of {} started", step + 1, st.plan->txn_count));
      if (tracing) trace(fmt::format("step {} released", step));
      // An iterations step has no time bound; but once every slave has ended its share,
      // master strands that stop making progress wait for what will not come: they are cut, and
      // the run fails saying so, rather than hang.
      const bool timed = std::any_of(st.plan->groups.begin(), st.plan->groups.end(), [&](const auto& g) {
        return g.strands > 0 && step < g.txns.size() &&
               std::holds_alternative<profile::Duration>(g.txns[step].bound);
      });
      bool watching = false;
      if (!co_await wait_until(
              [&] {
                if (st.local_done && *st.local_done >= step &&
                    (!st.children || st.children->all_done(step))) {
                  return true;
                }
                if (!timed && !watching && !st.slaves.empty() &&
                    all_slaves([&](const State::Slave& s) { return s.steps_done && *s.steps_done >= step; })) {
                  watching = true;
                  st.engine->end_txn(step, kStuckAfter, slaves_connected_to_master());
                }
                return false;
              },
              local_step_limit(step), fmt::format("the master's own strands to end step {}", step))) {
        break;
      }
      // Accepts that waited for connections the slaves never made (their connects failed, and
      // their counts say so) end the step as the slave's accepts end on the master's count.
      if (watching && st.engine->quiet_cut() == step && !st.engine->quiet_cut_only_accepts()) {
        st.stuck_step = step;
        fail(fmt::format("step {}: every slave had ended its share of this iterations step, but "
                         "master strands still waited {} ms later for data or connections that "
                         "will not come (the two sides' flowops no longer match); they were cut",
                         step, kStuckAfter.count()));
        break;
      }
      if (last_timed && st.cpu_before) {
        st.rss_after = sampling::resident_bytes();
        report_.master.cpu = sampling::cpu_usage(*st.cpu_before, sampling::sample_cpu());
        report_.master.nic = sampling::nic_rates(*st.nic_before, sampling::sample_nics());
        st.kernel.finish();
        report_.master.kernel = st.kernel.deltas();
      }
      // The end of the step: the master's writes are over; each slave learns what the master
      // wrote on every connection, drains to it, and says what it wrote itself before its
      // step_done (docs/control-protocol.md, "The end of a step").
      const auto drain_for = std::chrono::duration_cast<std::chrono::milliseconds>(settings_.step_grace) / 2;
      {
        std::vector<engine::ConnectionBytes> written = st.engine->take_step_written();
        if (st.children) {
          // The children's step_done came after their written: every entry is here.
          auto theirs = st.children->take_written();
          written.insert(written.end(), theirs.begin(), theirs.end());
        }
        // Each slave learns what the master wrote on the connections with it, as it numbers
        // them (its one peer, the master, is its peer 0).
        for (std::size_t i = 0; i < st.slaves.size(); ++i) {
          std::vector<engine::ConnectionBytes> its;
          for (const engine::ConnectionBytes& e : written) {
            if (e.peer != i) continue;
            its.push_back(e);
            its.back().peer = 0;
          }
          for (json& w : written_messages(step, its, st.slaves[i].limits.max_frame_bytes)) {
            co_await send_to(i, std::move(w));
          }
        }
      }
      {
        // Each slave learns how many TCP data connections the master's side established to it
        // (per data port, since the run began): it ends the step once its listeners have them all.
        HostPortCounts connected = st.engine->connected();
        if (st.children) {
          for (const auto& [key, n] : st.children->connected()) connected[key] += n;
        }
        for (std::size_t i = 0; i < st.slaves.size(); ++i) {
          json end_step = message("end_step", {{"step", step}, {"drain_ms", drain_for.count()}});
          const PortCounts mine = counts_for_host(connected, st.slaves[i].address.host);
          if (tracing) {
            std::uint64_t total = 0;
            for (const auto& [port, n] : mine) total += n;
            trace(fmt::format("step {}: slave {} has {} TCP data connections from the master in all",
                              step, i, total));
          }
          end_step["connected"] = port_counts_to_json(mine);
          co_await send_to(i, std::move(end_step));
        }
      }
      if (tracing) trace(fmt::format("step {}: waiting for the slaves' step_done", step));
      // Every slave has step_grace to report the step done; one that does not is named.
      const auto step_deadline = Clock::now() + settings_.step_grace;
      const auto late = [&] {
        std::vector<std::size_t> out;
        for (std::size_t i = 0; i < st.slaves.size(); ++i) {
          if (!(st.slaves[i].steps_done && *st.slaves[i].steps_done >= step)) out.push_back(i);
        }
        return out;
      };
      while (st.failure.empty() && !late().empty()) {
        if (Clock::now() > step_deadline) {
          std::vector<std::string> names;
          for (const std::size_t i : late()) {
            names.push_back(st.slaves[i].address.host);
            st.slaves[i].trouble = fmt::format(
                "did not report the end of step {} within {:.1f} s (--step-grace)", step,
                std::chrono::duration<double>(settings_.step_grace).count());
          }
          fail(fmt::format("slave{} {} did not report the end of step {} within {:.1f} s of the "
                           "master's end of step (--step-grace)",
                           names.size() == 1 ? "" : "s", fmt::join(names, ", "), step,
                           std::chrono::duration<double>(settings_.step_grace).count()));
          break;
        }
        co_await handle(co_await st.events.next());
      }
      if (!st.failure.empty()) break;
      if (tracing) trace(fmt::format("step {}: draining", step));
      // The master drains what the slaves wrote while each slave drains what it wrote; the next
      // step starts when both are level.
      std::vector<engine::ConnectionBytes> theirs;
      for (auto& s : st.slaves) {
        theirs.insert(theirs.end(), s.written.begin(), s.written.end());
        s.written.clear();
      }
      if (st.children) {
        // Each process drains the connections of its own strands (strand % processes).
        json child_end = message("end_step", {{"step", step}, {"drain_ms", drain_for.count()},
                                              {"connected", json::array()}});
        if (auto problem = co_await st.children->send_written(step, theirs); !problem.empty()) fail(problem);
        if (auto problem = co_await st.children->send_all(std::move(child_end)); !problem.empty()) fail(problem);
        std::erase_if(theirs, [&](const engine::ConnectionBytes& w) { return w.strand % st.processes != 0; });
      }
      st.engine->drain(step, std::move(theirs), Clock::now() + drain_for, context_,
                       [&st, step](std::vector<engine::DrainShortfall> shortfalls) {
                         st.events.push(LocalDrained{step, std::move(shortfalls)});
                       });
      co_await wait_until(
          [&] {
            return st.local_drained && *st.local_drained >= step &&
                   (!st.children || st.children->all_drained(step)) &&
                   all_slaves([&](const State::Slave& s) { return s.steps_drained && *s.steps_drained >= step; });
          },
          settings_.step_grace, fmt::format("the end-of-step drain of step {}", step));
      if (st.children) {
        const auto parts = st.children->drained();
        for (std::size_t i = 0; i < parts.size() && st.failure.empty(); ++i) {
          std::vector<engine::DrainShortfall> shortfalls;
          std::uint64_t total = 0;
          if (shortfalls_from(parts[i], shortfalls, total) && total > 0) {
            fail(describe_shortfalls(st.children->describe(i), step, shortfalls, total, *st.plan));
          }
        }
      }
    }
    st.interval_timer.cancel();
    // The last, partial interval: interval sums then equal the totals.
    if (!st.children) co_await handle(IntervalTick{});
    // ... the slaves' too: their answers must come before their results.
    if (st.ask_intervals && st.failure.empty()) {
      co_await wait_until(
          [&] {
            return all_slaves([&](const State::Slave& s) {
              return s.lost || s.intervals_answered >= st.intervals_taken;
            });
          },
          settings_.step_grace, "the slaves' counts of the last interval");
    }
    st.running = false;
    for (auto& s : st.slaves) s.channel->set_send_timeout(settings_.silence_timeout);
  }
  report_.duration = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - st.run_start);
  if (st.run_start == Clock::time_point{}) report_.duration = {};

  // Ctrl-C once the run had started: every slave and child process is told to stop where it
  // stands and hand over what it measured (docs/control-protocol.md, "Ctrl-C on the master"),
  // which the run collects until this deadline.
  const bool collect_interrupted = st.interrupted_at && st.run_start != Clock::time_point{};
  const auto collect_deadline = Clock::now() + kInterruptedResultsTimeout;

  // The children's shares merge into the master's result (or, after a failure, they stop); then
  // they are reaped.
  auto finish_children = [&]() -> awaitable<void> {
    if (st.failure.empty()) {
      json finish = message("finish");  // (built apart: GCC 12 fails on a literal in co_await)
      if (auto problem = co_await st.children->send_all(std::move(finish)); !problem.empty()) fail(problem);
      co_await wait_until([&] { return st.children->all_results(); }, kResultsTimeout,
                          "the master's child processes' results");
    } else if (collect_interrupted) {
      co_await collect_until([&] { return st.children->all_results(); }, collect_deadline);
    }
    if (st.failure.empty() || (collect_interrupted && st.children->all_results())) {
      if (auto problem = st.children->merge_results(report_.master.result); !problem.empty()) fail(problem);
      auto& cpu = report_.master.cpu;
      for (const json& part : st.children->results()) {
        const auto usage = cpu_usage_from_json(part.value("cpu", json()));
        if (!cpu || !cpu->process || !usage || !usage->process) continue;
        cpu->process->user_s += usage->process->user_s;
        cpu->process->sys_s += usage->process->sys_s;
        cpu->process->cores = cpu->wall_s > 0 ? (cpu->process->user_s + cpu->process->sys_s) / cpu->wall_s : 0;
        cpu->process->core_pct = cpu->process->cores * 100;
      }
    } else {
      json abort = message("abort", {{"reason", st.failure}});
      auto sent = co_await st.children->send_all(std::move(abort));
      (void)sent;
    }
    co_await st.children->close();
  };

  // 4. Collect results (or stop everyone), then close.
  if (collect_interrupted) {
    json stop = message("stop");
    if (st.children) {
      if (auto problem = co_await st.children->send_all(stop); !problem.empty()) fail(problem);
    }
    co_await send_all(std::move(stop));
  }
  if (st.engine) {
    if (!st.failure.empty()) st.engine->stop();
    report_.master.result = st.engine->finish();
    co_await asio::post(context_, asio::use_awaitable);
    report_.master.result.processes.push_back(process_record(
        st.children ? fmt::format("master process 1 of {}", st.processes) : "master",
        report_.master.result, st.rss_before, st.rss_after, report_.master.cpu));
    // A step cut short by a failure: its rates cover the time until the master last saw
    // progress, not the dead time until the failure was seen. One cut short by Ctrl-C: the time
    // until the interruption (the operator chose when to stop).
    auto& windows = report_.master.result.windows;
    if (st.failed_in_step && *st.failed_in_step < windows.size() &&
        *st.failed_in_step < st.step_release.size()) {
      const auto until = st.interrupted_at.value_or(st.last_progress_at);
      const auto measured = std::max(Clock::duration::zero(),
                                     until - st.step_release[*st.failed_in_step]);
      auto& elapsed = windows[*st.failed_in_step].elapsed;
      const auto measured_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(measured);
      // Zero when the engine, stopped by the failure, never closed the step's window: the
      // measured time is all there is (min() kept the zero: 0 txn/s over 0.00 s).
      elapsed = elapsed.count() == 0 ? measured_ns : std::min(elapsed, measured_ns);
    }
    if (st.stuck_step) st.failure += stuck_flowops(report_.master.result, *st.stuck_step);
  }
  // Every interval is in (the last take was posted back by finish()); show those still
  // waiting for a slave that will not answer now.
  st.show_all = true;
  show_intervals();
  if (st.children) co_await finish_children();
  if (st.failure.empty()) {
    json finish = message("finish");
    co_await send_all(std::move(finish));
    co_await wait_until([&] { return all_slaves([](const State::Slave& s) { return s.results.has_value(); }); },
                        kResultsTimeout, "the slaves' results");
  } else if (collect_interrupted) {
    co_await collect_until(
        [&] { return all_slaves([](const State::Slave& s) { return s.results || s.lost; }); },
        collect_deadline);
    for (auto& s : st.slaves) {
      if (s.results || !s.trouble.empty()) continue;
      s.trouble = fmt::format("no results within {} ms of the interruption",
                              kInterruptedResultsTimeout.count());
    }
  } else {
    json abort = message("abort", {{"reason", st.failure}});
    co_await send_all(std::move(abort));
  }
  for (auto& s : st.slaves) {
    report::SideReport side;
    side.role = "slave";
    side.host = s.address.host;
    if (s.results) {
      std::string error;
      if (auto r = results::run_result_from_json(s.results->value("result", json::object()), error)) {
        side.result = std::move(*r);
      } else {
        fail(fmt::format("slave {}: {}", s.address.host, error));
      }
      side.cpu = cpu_usage_from_json(s.results->value("cpu", json()));
      side.nic = nic_rates_from_json(s.results->value("nic", json()));
      side.kernel = kernel_counters_from_json(s.results->value("kernel", json()));
      if (const auto system = s.results->find("system"); system != s.results->end() && system->is_object()) {
        side.system = *system;
      }
    } else {
      side.missing = !s.trouble.empty()
                         ? s.trouble
                         : "no results: the run stopped before they were asked for";
    }
    report_.slaves.push_back(std::move(side));
    if (s.channel && s.channel->is_open() && !s.lost) {
      json bye = message("bye");
      auto sent = co_await s.channel->send(std::move(bye));
      (void)sent;
    }
    if (s.channel) s.channel->close();
  }
  st.ticking = false;
  st.ticker.cancel();
  // Reader coroutines reference the channels: wait until each has left.
  while (std::any_of(st.slaves.begin(), st.slaves.end(), [](const State::Slave& s) { return s.reader_alive; })) {
    auto event = co_await st.events.next();
    if (auto* exited = std::get_if<ReaderExited>(&event)) st.slaves[exited->slave].reader_alive = false;
  }
  co_await asio::post(context_, asio::use_awaitable);
  if (st.interrupted) {
    report_.status = report::RunStatus::kInterrupted;
    report_.failure = "interrupted";
  } else if (!st.failure.empty()) {
    report_.status = report::RunStatus::kFailed;
    report_.failure = st.failure;
  } else if (auto stopped = report::find_stopped_strands(report_); !stopped.empty()) {
    report_.status = report::RunStatus::kFailed;
    report_.failure = std::move(stopped);
  } else if (auto problem = report::find_result_problem(report_, settings_.allow_empty);
             !problem.empty()) {
    report_.status = report::RunStatus::kFailed;
    report_.failure = std::move(problem);
  }
}

}  // namespace volley::control
