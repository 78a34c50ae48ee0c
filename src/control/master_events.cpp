// The master's events, one at a time: each slave's messages through the session table, the
// local engine's notifications, the housekeeping and interval ticks, Ctrl-C; and the waits the
// script is made of.
#include <algorithm>
#include <type_traits>

#include <boost/asio/post.hpp>
#include <boost/asio/system_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "master_state.hpp"
#include "volley/control/message.hpp"
#include "volley/control/step_bytes_wire.hpp"

namespace volley::control {

using namespace master_events;  // NOLINT(google-build-using-namespace): this file handles them

namespace asio = boost::asio;
using asio::awaitable;
using nlohmann::json;

namespace {

constexpr auto kTick = std::chrono::milliseconds(250);

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

}  // namespace

void MasterRun::State::trace(const std::string& what) const {
  settings.trace(fmt::format(
      "{:9.3f} {}", std::chrono::duration<double>(MasterClock::now() - trace_start).count(), what));
}

void MasterRun::State::log(const std::string& line) const {
  if (settings.log) settings.log(line);
}

void MasterRun::State::fail(std::string why) {
  if (!failure.empty()) return;
  if (tracing) trace("run fails: " + why);
  failure = std::move(why);
  if (running && !(local_done && *local_done >= current_step)) failed_in_step = current_step;
}

bool MasterRun::State::all_slaves(const std::function<bool(const SlaveSession&)>& pred) const {
  return std::all_of(slaves.begin(), slaves.end(), pred);
}

void MasterRun::State::lose(std::size_t i, const ChannelError& error) {
  auto& s = slaves[i];
  if (s.lost) return;
  s.lost = true;
  if (!s.results) {
    std::string why = fmt::format("lost slave {}: {}", s.address.host, error.message);
    if (s.trouble.empty()) s.trouble = why;
    fail(std::move(why));
  }
}

awaitable<void> MasterRun::State::send_to(std::size_t i, json m) {
  auto& s = slaves[i];
  if (!s.channel || !s.channel->is_open() || s.lost) co_return;
  const std::string type = text_field(m, "type");
  s.phase = peer_after_send(s.phase, message_type(type));
  auto sent = co_await s.channel->send(std::move(m));
  auto* e = std::get_if<ChannelError>(&sent);
  if (tracing) trace(fmt::format("sent {} to slave {}: {}", type, i, e ? e->message : "ok"));
  if (e) lose(i, *e);
}

awaitable<void> MasterRun::State::send_all(json m) {
  for (std::size_t i = 0; i < slaves.size(); ++i) co_await send_to(i, m);
}

void MasterRun::State::arm_tick() {
  ticker.expires_after(kTick);
  ticker.async_wait([this](const boost::system::error_code& ec) {
    if (ec || !ticking) return;
    events.push(Tick{});
    arm_tick();
  });
}

awaitable<void> MasterRun::State::handle(MasterEvent event) {
  if (tracing && !std::holds_alternative<Tick>(event)) trace(describe_event(event));
  if (auto* m = std::get_if<SlaveMessage>(&event)) {
    on_slave_message(m->slave, m->message);
  } else if (auto* lost = std::get_if<SlaveLost>(&event)) {
    lose(lost->slave, lost->error);
    show_intervals();  // the intervals it had not answered for go without it
  } else if (auto* child = std::get_if<ChildMessage>(&event)) {
    if (children) {
      if (auto problem = children->note(child->child, child->message); !problem.empty())
        fail(problem);
    }
  } else if (auto* child_lost = std::get_if<ChildLost>(&event)) {
    if (children) fail(children->lost(child_lost->child, child_lost->error));
  } else if (auto* exited = std::get_if<ReaderExited>(&event)) {
    slaves[exited->slave].reader_alive = false;
  } else if (auto* done = std::get_if<LocalStepDone>(&event)) {
    local_done = done->step;
  } else if (auto* drained = std::get_if<LocalDrained>(&event)) {
    local_drained = drained->step;
    if (!drained->shortfalls.empty()) {
      fail(describe_shortfalls("master", drained->step, drained->shortfalls,
                               drained->shortfalls.size(), *plan));
    }
  } else if (std::holds_alternative<Interrupt>(event)) {
    on_interrupt();
  } else if (std::holds_alternative<IntervalTick>(event)) {
    if (running && engine) {
      on_interval_tick();
      // The slaves take theirs when this arrives: half a round trip later than the master's.
      if (ask_intervals) co_await send_all(interval_request(intervals_taken - 1));
    }
  } else if (std::holds_alternative<Tick>(event)) {
    co_await on_tick();
  }
}

void MasterRun::State::on_slave_message(std::size_t i, const json& m) {
  auto& s = slaves[i];
  s.last_heard = MasterClock::now();
  const std::string type_name = text_field(m, "type");
  const MessageType type = message_type(type_name);
  if (const Rule rule = peer_rule(s.phase, type); rule != Rule::kAccept) {
    fail(fmt::format("slave {} sent {}", s.address.host, unexpected(rule, type_name, s.phase)));
    return;
  }
  s.phase = peer_after_receive(s.phase, type);
  switch (type) {
    case MessageType::kHello:
      if (auto problem = check_hello(m, s.channel->peer()); !problem.empty()) {
        fail(problem);
      } else {
        s.limits = announced_limits(m);
      }
      break;
    case MessageType::kLoaded:
      s.ports = ports_from_json(m.value("ports", json::object()));
      s.shard_ports = loaded_listeners(m);  // a slave spread over processes: one port per process
      s.tls_fingerprint = text_field(m, "tls_fingerprint");
      if (const std::string io = text_field(m, "io"); io == "uring" || io == "epoll") s.io = io;
      break;
    case MessageType::kRejected:
      fail(fmt::format("slave {} could not set up the run:\n{}", s.address.host,
                       text_field(m, "message")));
      break;
    case MessageType::kStepDone:
      if (const auto step = uint_field(m, "step")) {
        s.steps_done = static_cast<std::size_t>(*step);
        s.connected_to_master = uint_field(m, "connected_to_master");
      } else {
        fail(fmt::format("slave {} sent a malformed step_done", s.address.host));
      }
      break;
    case MessageType::kWritten: {
      const std::size_t before = s.written.size();
      if (!append_written(m, s.written))
        fail(fmt::format("slave {} sent a malformed written message", s.address.host));
      // The master numbers its connections per slave: these are slave i's.
      for (std::size_t k = before; k < s.written.size(); ++k)
        s.written[k].peer = static_cast<std::uint32_t>(i);
      break;
    }
    case MessageType::kDrained: {
      std::vector<engine::DrainShortfall> shortfalls;
      std::uint64_t total = 0;
      const auto step = uint_field(m, "step");
      if (!step || !shortfalls_from(m, shortfalls, total)) {
        fail(fmt::format("slave {} sent a malformed drained message", s.address.host));
        break;
      }
      s.steps_drained = static_cast<std::size_t>(*step);
      if (total > 0) {
        s.trouble = describe_shortfalls(fmt::format("slave {}", s.address.host),
                                        static_cast<std::size_t>(*step), shortfalls, total, *plan);
        fail(s.trouble);
      }
      break;
    }
    case MessageType::kIntervalCounts: {
      auto part = interval_part_from_json(m);
      if (!part || part->interval != s.intervals_answered || part->interval >= intervals_taken) {
        fail(fmt::format("slave {} sent a malformed or unexpected interval_counts message",
                         s.address.host));
        break;
      }
      ++s.intervals_answered;
      if (part->interval < intervals_shown) {
        // Too late: the interval was shown without it (its slave counted missing there).
      } else if (part->interval < report.intervals.size()) {
        add_interval_part(i, *part);
      } else {
        early_parts[part->interval].emplace_back(i, std::move(*part));
      }
      show_intervals();
      break;
    }
    case MessageType::kResults: s.results = m; break;
    case MessageType::kError:
      fail(fmt::format("slave {}: {}", s.address.host, text_field(m, "message")));
      break;
    case MessageType::kAbort:
      fail(fmt::format("slave {} aborted the run: {}", s.address.host, text_field(m, "reason")));
      break;
    default: break;  // ping
  }
}

void MasterRun::State::push_interrupt() { events.push(MasterEvent(std::in_place_type<Interrupt>)); }

void MasterRun::State::on_interrupt() {
  if (!interrupted && failure.empty()) {
    interrupted_at = MasterClock::now();
    // In the timed part: its CPU and NIC figures end here, as its rates do.
    if (running && cpu_before && !report.master.cpu) measure_timed_end();
  }
  interrupted = true;
  fail("interrupted");
}

void MasterRun::State::on_interval_tick() {
  const auto now = MasterClock::now();
  report::IntervalSample sample;
  sample.start_unix_ns =
      unix_now_ns() -
      std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_interval).count();
  sample.since_run_start =
      std::chrono::duration_cast<std::chrono::nanoseconds>(last_interval - run_start);
  sample.length = std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_interval);
  sample.step = current_step;
  if (kernel_series) sample.kernel.push_back({"master", kernel_series->next()});
  last_interval = now;
  const std::uint64_t n = intervals_taken++;
  if (ask_intervals) {
    sample.peers.asked = static_cast<std::size_t>(
        std::count_if(slaves.begin(), slaves.end(), [](const SlaveSession& s) { return !s.lost; }));
  }
  // The workers answer on this thread later; samples arrive in the order they were taken.
  // Only counters and a few percentiles are kept: the series must not grow with the
  // histograms' size. The full histograms go to the latency log, if asked for, and go.
  engine->take_interval(context, [this, n, sample = std::move(sample)](
                                     const std::vector<results::SlotStats>& slots) mutable {
    report::summarize_interval(report.slot_names, slots, sample);
    report.intervals.push_back(std::move(sample));
    if (const auto early = early_parts.find(n); early != early_parts.end()) {
      for (const auto& [slave, part] : early->second) add_interval_part(slave, part);
      early_parts.erase(early);
    }
    if (settings.on_interval_histograms)
      settings.on_interval_histograms(report, report.intervals.back(), slots);
    show_intervals();
  });
}

awaitable<void> MasterRun::State::on_tick() {
  const auto now = MasterClock::now();
  if (running && engine) {
    const std::uint64_t progress = engine->progress();
    if (progress != last_progress) {
      last_progress = progress;
      last_progress_at = now;
    }
  }
  // While steps run a dead link must be noticed within seconds; loading and reporting may
  // legitimately keep a slave busy longer.
  const auto silence_limit = running ? settings.link_timeout : settings.silence_timeout;
  // A tick far later than its 250 ms means this thread was held up itself: the slaves'
  // messages may be waiting behind it, unread. Judge silence on a later tick.
  const bool master_was_stalled = now - last_tick > 4 * kTick;
  last_tick = now;
  for (std::size_t i = 0; i < slaves.size(); ++i) {
    auto& s = slaves[i];
    if (!s.channel || !s.channel->is_open() || s.results) continue;
    if (!master_was_stalled && now - s.last_heard > silence_limit) {
      std::string why =
          fmt::format("slave {} has been silent for {:.1f} s (the link or the slave is down)",
                      s.address.host, std::chrono::duration<double>(now - s.last_heard).count());
      if (s.trouble.empty()) s.trouble = why;
      fail(std::move(why));
    } else if (s.phase != PeerPhase::kGreeting && now - s.last_ping >= settings.ping_interval) {
      s.last_ping = now;
      json ping = message("ping");
      co_await send_to(i, std::move(ping));
    }
  }
}

void MasterRun::State::add_interval_part(std::size_t slave, const IntervalPart& part) {
  report::IntervalSample& sample = report.intervals.at(part.interval);
  if (!part.missing.empty()) {
    if (!sample.peers.missing.empty()) sample.peers.missing += "; ";
    sample.peers.missing += fmt::format("slave {}: {}", slaves[slave].address.host, part.missing);
    return;
  }
  for (const TxnDatagrams& t : part.txns)
    report::add_peer_datagrams(report.slot_names, t.group, t.txn, t.counts, sample);
  for (const TxnTcp& t : part.tcp)
    report::add_peer_tcp(report.slot_names, t.group, t.txn, t.tcp, sample);
  if (part.kernel) sample.kernel.push_back({slaves[slave].address.host, *part.kernel});
  ++sample.peers.answered;
}

void MasterRun::State::show_intervals() {
  while (intervals_shown < report.intervals.size()) {
    const std::size_t n = intervals_shown;
    report::IntervalSample& sample = report.intervals[n];
    if (sample.peers.asked > 0) {
      std::vector<std::string> silent;
      for (const auto& s : slaves) {
        if (s.intervals_answered <= n) silent.push_back(s.address.host);
      }
      const bool waiting = std::any_of(slaves.begin(), slaves.end(), [n](const SlaveSession& s) {
        return s.intervals_answered <= n && !s.lost;
      });
      if (waiting && !show_all) return;
      if (!silent.empty()) {
        if (!sample.peers.missing.empty()) sample.peers.missing += "; ";
        sample.peers.missing += fmt::format("no counts from slave {}", fmt::join(silent, ", "));
      }
    }
    ++intervals_shown;
    report::settle_peer_tcp(sample);
    if (settings.on_interval) settings.on_interval(report, sample);
  }
}

// A wait whose condition an event met must not leave the events queued behind it for later: a
// lost slave's among them would go unseen while the run sends to it (a killed slave: the master's
// strands end their step on the data connections' resets, and the control connection's close,
// queued behind that, must still fail the run at once rather than at the end of the step).
awaitable<void> MasterRun::State::absorb_queued() {
  while (!events.empty()) co_await handle(co_await events.next());
}

awaitable<bool> MasterRun::State::wait_until(std::function<bool()> done,
                                             MasterClock::duration timeout, std::string what) {
  const auto deadline = MasterClock::now() + timeout;
  while (!done()) {
    if (!failure.empty()) co_return false;
    if (MasterClock::now() > deadline) {
      fail(fmt::format("timed out after {} s waiting for {}",
                       std::chrono::duration_cast<std::chrono::seconds>(timeout).count(), what));
      co_return false;
    }
    co_await handle(co_await events.next());
  }
  co_await absorb_queued();
  co_return failure.empty();
}

awaitable<void> MasterRun::State::collect_until(std::function<bool()> done,
                                                MasterClock::time_point deadline) {
  asio::steady_timer wake(context);
  wake.expires_at(deadline);
  wake.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) events.push(Tick{});
  });
  while (!done() && MasterClock::now() < deadline) co_await handle(co_await events.next());
  wake.cancel();
  co_await asio::post(context, asio::use_awaitable);  // let a cancelled handler finish
}

// --start-at: holds the first timed step until the wall clock reaches `at_ns`, still handling
// events meanwhile (pings keep the slaves from timing out; a lost slave or Ctrl-C ends it).
awaitable<bool> MasterRun::State::wait_for_wall_clock(std::int64_t at_ns) {
  auto reached = std::make_shared<bool>(false);
  asio::system_timer timer(context);
  timer.expires_at(std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(at_ns))));
  timer.async_wait([this, reached](const boost::system::error_code& ec) {
    if (ec) return;
    *reached = true;
    events.push(Tick{});
  });
  const bool ok =
      co_await wait_until([&] { return *reached; }, std::chrono::hours(25), "the start time");
  timer.cancel();
  co_await asio::post(context, asio::use_awaitable);  // let a cancelled handler finish
  co_return ok;
}

}  // namespace volley::control
