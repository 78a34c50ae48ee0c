// The master's steps: start every side, then for each step release it everywhere, wait for the
// master's own strands to end it, tell each slave what the master wrote and connected, wait for
// the slaves' step_done, and drain (docs/control-protocol.md, "The end of a step").
#include <algorithm>

#include <fmt/format.h>

#include "master_state.hpp"
#include "volley/sampling/resident_memory.hpp"
#include "volley/control/child_wire.hpp"
#include "volley/control/connected_wire.hpp"
#include "volley/control/message.hpp"
#include "volley/control/step_bytes_wire.hpp"
#include "volley/profile/flowop_hosts.hpp"

namespace volley::control {

using namespace master_events;  // NOLINT(google-build-using-namespace): this file handles them

namespace asio = boost::asio;
using asio::awaitable;
using nlohmann::json;

namespace {

/// In an iterations step every slave has ended its share, and the master's strands have made no
/// progress (and none thinks) for this long: what they wait for will not come.
constexpr auto kStuckAfter = std::chrono::milliseconds(500);

/// The report's name and host for every stat slot of the plan: "group/txn/flowop".
std::vector<report::SlotName> slot_names(const profile::Profile& profile,
                                         const engine::Plan& plan) {
  std::vector<report::SlotName> names;
  const profile::FlowopHosts hosts = profile::flowop_hosts(profile);
  for (const auto& info : plan.slots) {
    const auto& g = plan.groups[info.group];
    std::string name = fmt::format("{}/{}", engine::group_display_name(g, info.group),
                                   engine::txn_display_name(g.txns[info.txn], info.txn));
    if (info.flowop) name += "/" + g.txns[info.txn].ops[*info.flowop].type;
    if (info.uncorrected) name += "/uncorrected";
    if (info.part == engine::SlotPart::kHandshake) name += ":handshake";
    if (info.part == engine::SlotPart::kResumed) name += ":resumed";
    std::string host;
    if (info.flowop && info.group < hosts.size() && info.txn < hosts[info.group].size() &&
        *info.flowop < hosts[info.group][info.txn].size()) {
      host = hosts[info.group][info.txn][*info.flowop];
    }
    names.push_back({info.group, info.txn, info.flowop, info.uncorrected, std::move(name),
                     std::move(host), info.part != engine::SlotPart::kWhole});
  }
  return names;
}

/// This process's CPU time (user + system) since `before`, seconds; nullopt when either reading
/// failed.
std::optional<double> cpu_seconds_since(const std::optional<sampling::ProcessCpuTimes>& before) {
  const auto after = sampling::read_process_cpu();
  if (!before || !after) return std::nullopt;
  const auto used = (after->user - before->user) + (after->system - before->system);
  return std::chrono::duration<double>(used).count();
}

}  // namespace

awaitable<void> MasterRun::State::start_steps() {
  const auto ports = engine->listener_ports();
  const std::uint16_t master_port = ports.count(0) != 0 ? ports.at(0) : 0;
  json start = message("start", {{"master_port", master_port}});
  // Slaves send strand s's connections to the master's process s % processes, spread over its
  // listeners (Engine::negotiated_ports()).
  std::vector<std::vector<std::uint16_t>> listeners = {engine->negotiated_ports()};
  if (children) {
    for (const auto& p : children->negotiated()) listeners.push_back(p);
  }
  if (const auto spread = spread_ports(listeners); spread.size() > 1)
    start["master_ports"] = spread;
  if (children) {
    json child_start = message(
        "start", {{"master_port", 0}, {"targets", targets_to_json(engine->config().targets)}});
    if (auto problem = co_await children->send_all(std::move(child_start)); !problem.empty())
      fail(problem);
    children->listen(
        [this](std::size_t i, json m) {
          events.push(ChildMessage{i, std::move(m)});
        },
        [this](std::size_t i, ChannelError e) {
          events.push(ChildLost{i, std::move(e)});
        });
  }
  co_await send_all(std::move(start));
  engine->start();
  report.timed_steps = engine::timed_steps(*plan);
  report.slot_names = slot_names(*settings.profile, *plan);
  report.master_steps.assign(plan->txn_count, {});
  run_start = MasterClock::now();
  last_interval = run_start;
  last_progress_at = run_start;
  step_release.assign(plan->txn_count, run_start);
  report.start_unix_ns = unix_now_ns();
  running = true;
  // While steps run a slave that stops taking messages is lost as soon as a silent one is.
  for (auto& s : slaves) s.channel->set_send_timeout(settings.link_timeout);
  // Processes: the live intervals would count this process's share only, so there are none
  // (the final result merges every process).
  if (settings.interval.count() > 0 && !children) {
    kernel_series.emplace();
    arm_interval();
  }
  // Every slave has its host's kernel counters to give, and its UDP counts and TCP state.
  ask_intervals = !children;
  if (children) log("live intervals are off: the master's side runs in several processes");
}

void MasterRun::State::arm_interval() {
  interval_timer.expires_after(settings.interval);
  interval_timer.async_wait([this](const boost::system::error_code& ec) {
    if (ec || !running) return;
    events.push(IntervalTick{});
    arm_interval();
  });
}

awaitable<bool> MasterRun::State::run_step(std::size_t step) {
  const bool first_timed = step == report.timed_steps.front();
  if (first_timed && settings.start_at_unix_ns) {
    // Before current_step moves on, so intervals while waiting are not the timed step's.
    report.start_at_unix_ns = settings.start_at_unix_ns;
    if (!co_await wait_for_wall_clock(*settings.start_at_unix_ns)) co_return false;
  }
  current_step = step;
  if (first_timed) {
    cpu_before = sampling::sample_cpu();
    nic_before = sampling::sample_nics();
    kernel.start();
  }
  json proceed = message("proceed", {{"step", step}});
  if (children) {
    if (auto problem = co_await children->send_all(proceed); !problem.empty()) fail(problem);
  }
  co_await send_all(std::move(proceed));
  const auto cpu_at_release = sampling::read_process_cpu();
  step_release[step] = MasterClock::now();
  report.master_steps[step].released_unix_ns = unix_now_ns();
  engine->release(step);
  log(fmt::format("step {} of {} started", step + 1, plan->txn_count));
  if (tracing) trace(fmt::format("step {} released", step));
  if (!co_await wait_for_local_step(step)) co_return false;
  report.master_steps[step].ended_unix_ns = unix_now_ns();
  if (step == report.timed_steps.back() && cpu_before) measure_timed_end();
  co_await send_step_end(step);
  if (!co_await wait_for_slaves_step_done(step)) co_return false;
  co_await drain_step(step);
  if (!children) report.master_steps[step].cpu_s = cpu_seconds_since(cpu_at_release);
  co_return failure.empty();
}

void MasterRun::State::measure_timed_end() {
  rss_after = sampling::resident_bytes();
  report.master.cpu = sampling::cpu_usage(*cpu_before, sampling::sample_cpu());
  report.master.nic = sampling::nic_rates(*nic_before, sampling::sample_nics());
  kernel.finish();
  report.master.kernel = kernel.deltas();
}

// An iterations step has no time bound; but once every slave has ended its share, master
// strands that stop making progress wait for what will not come: they are cut, and the run
// fails saying so, rather than hang.
awaitable<bool> MasterRun::State::wait_for_local_step(std::size_t step) {
  const bool timed = std::any_of(plan->groups.begin(), plan->groups.end(), [&](const auto& g) {
    return g.strands > 0 && step < g.txns.size() &&
           std::holds_alternative<profile::Duration>(g.txns[step].bound);
  });
  bool watching = false;
  const auto local_done_or_watch = [&] {
    if (local_done && *local_done >= step && (!children || children->all_done(step))) return true;
    if (!timed && !watching && !slaves.empty() &&
        all_slaves([&](const SlaveSession& s) { return s.steps_done && *s.steps_done >= step; })) {
      watching = true;
      engine->end_txn(step, kStuckAfter, slaves_connected_to_master());
    }
    return false;
  };
  if (!co_await wait_until(local_done_or_watch, local_step_limit(step),
                           fmt::format("the master's own strands to end step {}", step))) {
    co_return false;
  }
  // Accepts that waited for connections the slaves never made (their connects failed, and
  // their counts say so) end the step as the slave's accepts end on the master's count.
  if (watching && engine->quiet_cut() == step && !engine->quiet_cut_only_accepts()) {
    stuck_step = step;
    fail(
        fmt::format("step {}: every slave had ended its share of this iterations step, but "
                    "master strands still waited {} ms later for data or connections that "
                    "will not come (the two sides' flowops no longer match); they were cut",
                    step, kStuckAfter.count()));
    co_return false;
  }
  co_return true;
}

// The master's writes are over; each slave learns what the master wrote on every connection
// with it (as it numbers them: its one peer, the master, is its peer 0) and how many TCP data
// connections the master's side established to it (per data port, since the run began).
awaitable<void> MasterRun::State::send_step_end(std::size_t step) {
  std::vector<engine::ConnectionBytes> written = engine->take_step_written();
  if (children) {
    // The children's step_done came after their written: every entry is here.
    auto theirs = children->take_written();
    written.insert(written.end(), theirs.begin(), theirs.end());
  }
  for (std::size_t i = 0; i < slaves.size(); ++i) {
    std::vector<engine::ConnectionBytes> its;
    for (const engine::ConnectionBytes& e : written) {
      if (e.peer != i) continue;
      its.push_back(e);
      its.back().peer = 0;
    }
    for (json& w : written_messages(step, its, slaves[i].limits.max_frame_bytes))
      co_await send_to(i, std::move(w));
  }
  HostPortCounts connected = engine->connected();
  if (children) {
    for (const auto& [key, n] : children->connected()) connected[key] += n;
  }
  const auto drain_for =
      std::chrono::duration_cast<std::chrono::milliseconds>(settings.step_grace) / 2;
  for (std::size_t i = 0; i < slaves.size(); ++i) {
    json end_step = message("end_step", {{"step", step}, {"drain_ms", drain_for.count()}});
    const PortCounts mine = counts_for_host(connected, slaves[i].address.host);
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

// Every slave has step_grace to report the step done; one that does not is named.
awaitable<bool> MasterRun::State::wait_for_slaves_step_done(std::size_t step) {
  if (tracing) trace(fmt::format("step {}: waiting for the slaves' step_done", step));
  const auto step_deadline = MasterClock::now() + settings.step_grace;
  const auto late = [&] {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < slaves.size(); ++i) {
      if (!(slaves[i].steps_done && *slaves[i].steps_done >= step)) out.push_back(i);
    }
    return out;
  };
  const double grace_s = std::chrono::duration<double>(settings.step_grace).count();
  while (failure.empty() && !late().empty()) {
    if (MasterClock::now() > step_deadline) {
      std::vector<std::string> names;
      for (const std::size_t i : late()) {
        names.push_back(slaves[i].address.host);
        slaves[i].trouble = fmt::format(
            "did not report the end of step {} within {:.1f} s (--step-grace)", step, grace_s);
      }
      fail(
          fmt::format("slave{} {} did not report the end of step {} within {:.1f} s of the "
                      "master's end of step (--step-grace)",
                      names.size() == 1 ? "" : "s", fmt::join(names, ", "), step, grace_s));
      break;
    }
    co_await handle(co_await events.next());
  }
  co_return failure.empty();
}

// The master drains what the slaves wrote while each slave drains what it wrote; the next step
// starts when both are level.
awaitable<void> MasterRun::State::drain_step(std::size_t step) {
  if (tracing) trace(fmt::format("step {}: draining", step));
  const auto drain_for =
      std::chrono::duration_cast<std::chrono::milliseconds>(settings.step_grace) / 2;
  std::vector<engine::ConnectionBytes> theirs;
  for (auto& s : slaves) {
    theirs.insert(theirs.end(), s.written.begin(), s.written.end());
    s.written.clear();
  }
  if (children) {
    // Each process drains the connections of its own strands (strand % processes).
    json child_end =
        message("end_step",
                {{"step", step}, {"drain_ms", drain_for.count()}, {"connected", json::array()}});
    if (auto problem = co_await children->send_written(step, theirs); !problem.empty())
      fail(problem);
    if (auto problem = co_await children->send_all(std::move(child_end)); !problem.empty())
      fail(problem);
    std::erase_if(theirs,
                  [&](const engine::ConnectionBytes& w) { return w.strand % processes != 0; });
  }
  engine->drain(step, theirs, MasterClock::now() + drain_for, context,
                [this, step](std::vector<engine::DrainShortfall> shortfalls) {
                  events.push(LocalDrained{step, std::move(shortfalls)});
                });
  co_await wait_until(
      [&] {
        return local_drained && *local_drained >= step &&
               (!children || children->all_drained(step)) && all_slaves([&](const SlaveSession& s) {
                 return s.steps_drained && *s.steps_drained >= step;
               });
      },
      settings.step_grace, fmt::format("the end-of-step drain of step {}", step));
  if (!children) co_return;
  const auto parts = children->drained();
  for (std::size_t i = 0; i < parts.size() && failure.empty(); ++i) {
    std::vector<engine::DrainShortfall> shortfalls;
    std::uint64_t total = 0;
    if (shortfalls_from(parts[i], shortfalls, total) && total > 0) {
      fail(describe_shortfalls(children->describe(i), step, shortfalls, total, *plan));
    }
  }
}

// The last, partial interval (interval sums then equal the totals), and the slaves' answers for
// it, which must come before their results.
awaitable<void> MasterRun::State::finish_steps() {
  interval_timer.cancel();
  if (!children) co_await handle(IntervalTick{});
  if (ask_intervals && failure.empty()) {
    co_await wait_until(
        [&] {
          return all_slaves([&](const SlaveSession& s) {
            return s.lost || s.intervals_answered >= intervals_taken;
          });
        },
        settings.step_grace, "the slaves' counts of the last interval");
  }
  running = false;
  for (auto& s : slaves) s.channel->set_send_timeout(settings.silence_timeout);
}

// A step bounded by a duration ends on the master by its deadline plus the engine's drain grace;
// beyond that plus step_grace something is broken, and the run says so instead of waiting.
// A step bounded by iterations takes as long as its work does.
MasterClock::duration MasterRun::State::local_step_limit(std::size_t step) const {
  std::chrono::nanoseconds longest{0};
  bool timed = false;
  for (const auto& g : plan->groups) {
    if (g.strands == 0 || step >= g.txns.size()) continue;
    if (const auto* d = std::get_if<profile::Duration>(&g.txns[step].bound)) {
      timed = true;
      longest = std::max(longest, std::chrono::nanoseconds(d->length));
    }
  }
  if (!timed) return std::chrono::hours(24 * 365);
  return longest + engine->config().drain_limit + settings.step_grace;
}

// The TCP data connections the slaves made to this engine's listeners, when every slave said
// (its step_done) and this process holds all of the master's listeners (no child processes).
std::optional<std::uint64_t> MasterRun::State::slaves_connected_to_master() const {
  if (children) return std::nullopt;
  std::uint64_t sum = 0;
  for (const auto& s : slaves) {
    if (!s.connected_to_master) return std::nullopt;
    sum += *s.connected_to_master;
  }
  return sum;
}

}  // namespace volley::control
