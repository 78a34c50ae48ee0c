// The master's run after its last step (or its failure): stop every side if Ctrl-C cut the run,
// take the master's own result, the children's and the slaves' (or tell them to abort), build
// each side's report, and say goodbye.
#include <algorithm>

#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "master_state.hpp"
#include "volley/results/result_json.hpp"
#include "volley/control/message.hpp"
#include "volley/control/sampling_wire.hpp"

namespace volley::control {

using namespace master_events;  // NOLINT(google-build-using-namespace): this file handles them

namespace asio = boost::asio;
using asio::awaitable;
using nlohmann::json;

namespace {

constexpr auto kResultsTimeout = std::chrono::seconds(60);

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

}  // namespace

// Ctrl-C once the run had started: every slave and child process is told to stop where it
// stands and hand over what it measured (docs/control-protocol.md, "Ctrl-C on the master"),
// which the run collects until kInterruptedResultsTimeout. Otherwise a run that did not fail
// asks for the results, and one that failed tells everyone to abort.
awaitable<void> MasterRun::State::collect() {
  collect_interrupted = interrupted_at && run_start != MasterClock::time_point{};
  collect_deadline = MasterClock::now() + kInterruptedResultsTimeout;
  if (collect_interrupted) {
    json stop = message("stop");
    if (children) {
      if (auto problem = co_await children->send_all(stop); !problem.empty()) fail(problem);
    }
    co_await send_all(std::move(stop));
  }
  if (engine) {
    if (!failure.empty()) engine->stop();
    report.master.result = engine->finish();
    co_await asio::post(context, asio::use_awaitable);
    finish_local_result();
  }
  // Every interval is in (the last take was posted back by finish()); show those still
  // waiting for a slave that will not answer now.
  show_all = true;
  show_intervals();
  if (children) co_await finish_children();
  if (failure.empty()) {
    json finish = message("finish");
    co_await send_all(std::move(finish));
    co_await wait_until(
        [&] { return all_slaves([](const SlaveSession& s) { return s.results.has_value(); }); },
        kResultsTimeout, "the slaves' results");
  } else if (collect_interrupted) {
    co_await collect_until(
        [&] { return all_slaves([](const SlaveSession& s) { return s.results || s.lost; }); },
        collect_deadline);
    for (auto& s : slaves) {
      if (s.results || !s.trouble.empty()) continue;
      s.trouble = fmt::format("no results within {} ms of the interruption",
                              kInterruptedResultsTimeout.count());
    }
  } else {
    json abort = message("abort", {{"reason", failure}});
    co_await send_all(std::move(abort));
  }
  add_slave_reports();
}

// The master's own record; and a step cut short by a failure: its rates cover the time until
// the master last saw progress, not the dead time until the failure was seen. One cut short by
// Ctrl-C: the time until the interruption (the operator chose when to stop).
void MasterRun::State::finish_local_result() {
  report.master.result.processes.push_back(
      process_record(children ? fmt::format("master process 1 of {}", processes) : "master",
                     report.master.result, rss_before, rss_after, report.master.cpu));
  auto& windows = report.master.result.windows;
  if (failed_in_step && *failed_in_step < windows.size() && *failed_in_step < step_release.size()) {
    const auto until = interrupted_at.value_or(last_progress_at);
    const auto measured =
        std::max(MasterClock::duration::zero(), until - step_release[*failed_in_step]);
    auto& elapsed = windows[*failed_in_step].elapsed;
    const auto measured_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(measured);
    // Zero when the engine, stopped by the failure, never closed the step's window: the
    // measured time is all there is (min() kept the zero: 0 txn/s over 0.00 s).
    elapsed = elapsed.count() == 0 ? measured_ns : std::min(elapsed, measured_ns);
  }
  if (stuck_step) failure += stuck_flowops(report.master.result, *stuck_step);
}

// The children's shares merge into the master's result (or, after a failure, they stop); then
// they are reaped.
awaitable<void> MasterRun::State::finish_children() {
  if (failure.empty()) {
    json finish = message("finish");  // (built apart: GCC 12 fails on a literal in co_await)
    if (auto problem = co_await children->send_all(std::move(finish)); !problem.empty())
      fail(problem);
    co_await wait_until([&] { return children->all_results(); }, kResultsTimeout,
                        "the master's child processes' results");
  } else if (collect_interrupted) {
    co_await collect_until([&] { return children->all_results(); }, collect_deadline);
  }
  if (failure.empty() || (collect_interrupted && children->all_results())) {
    if (auto problem = children->merge_results(report.master.result); !problem.empty())
      fail(problem);
    auto& cpu = report.master.cpu;
    for (const json& part : children->results()) {
      const auto usage = cpu_usage_from_json(part.value("cpu", json()));
      if (!cpu || !cpu->process || !usage || !usage->process) continue;
      cpu->process->user_s += usage->process->user_s;
      cpu->process->sys_s += usage->process->sys_s;
      cpu->process->cores =
          cpu->wall_s > 0 ? (cpu->process->user_s + cpu->process->sys_s) / cpu->wall_s : 0;
      cpu->process->core_pct = cpu->process->cores * 100;
    }
  } else {
    json abort = message("abort", {{"reason", failure}});
    auto sent = co_await children->send_all(std::move(abort));
    (void)sent;
  }
  co_await children->close();
}

void MasterRun::State::add_slave_reports() {
  for (auto& s : slaves) {
    report::SideReport side;
    side.role = "slave";
    side.host = s.address.host;
    side.io = s.io;
    if (s.results) {
      std::string error;
      if (auto r =
              results::run_result_from_json(s.results->value("result", json::object()), error)) {
        side.result = std::move(*r);
      } else {
        fail(fmt::format("slave {}: {}", s.address.host, error));
      }
      side.cpu = cpu_usage_from_json(s.results->value("cpu", json()));
      side.nic = nic_rates_from_json(s.results->value("nic", json()));
      side.kernel = kernel_counters_from_json(s.results->value("kernel", json()));
      if (const auto system = s.results->find("system");
          system != s.results->end() && system->is_object()) {
        side.system = *system;
      }
    } else {
      side.missing =
          !s.trouble.empty() ? s.trouble : "no results: the run stopped before they were asked for";
    }
    report.slaves.push_back(std::move(side));
  }
}

// Every slave still linked hears `bye`; then the channels close, and the readers (which hold
// references to them) are waited for.
awaitable<void> MasterRun::State::say_goodbye() {
  for (auto& s : slaves) {
    if (s.channel && s.channel->is_open() && !s.lost) {
      json bye = message("bye");
      auto sent = co_await s.channel->send(std::move(bye));
      (void)sent;
    }
    if (s.channel) s.channel->close();
  }
  ticking = false;
  ticker.cancel();
  while (std::any_of(slaves.begin(), slaves.end(),
                     [](const SlaveSession& s) { return s.reader_alive; })) {
    auto event = co_await events.next();
    if (auto* exited = std::get_if<ReaderExited>(&event))
      slaves[exited->slave].reader_alive = false;
  }
  co_await asio::post(context, asio::use_awaitable);
}

}  // namespace volley::control
