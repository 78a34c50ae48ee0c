// The master's messages to a slave's session: judged by the session table (session.hpp), then,
// for a run's steps, by its step barrier; and what the session sends back (intervals, results).
#include <optional>
#include <variant>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "off_thread.hpp"
#include "volley/control/child_set.hpp"
#include "volley/control/sampling_wire.hpp"
#include "volley/process/process_count.hpp"
#include "volley/control/channel.hpp"
#include "volley/control/codec.hpp"
#include "volley/core/host_port.hpp"
#include "volley/core/printable.hpp"
#include "volley/control/event_queue.hpp"
#include "volley/control/handshake.hpp"
#include "volley/control/interval_wire.hpp"
#include "volley/control/message.hpp"
#include "volley/control/session.hpp"
#include "volley/control/step_barrier.hpp"
#include "volley/control/connected_wire.hpp"
#include "volley/control/step_bytes_wire.hpp"
#include "volley/engine/engine.hpp"
#include "volley/profile/duration_cap.hpp"
#include "volley/profile/mirror.hpp"
#include "volley/profile/parser.hpp"
#include "volley/sampling/cpu_sampler.hpp"
#include "volley/sampling/nic_sampler.hpp"
#include "volley/sampling/system_snapshot.hpp"
#include "volley/transport/address_family.hpp"
#include "slave_session.hpp"
#include "volley/sampling/resident_memory.hpp"
#include "volley/results/result_json.hpp"

namespace volley::control {

using namespace slave_events;  // NOLINT(google-build-using-namespace): this file handles them

namespace asio = boost::asio;
using asio::ip::tcp;
using nlohmann::json;
using Clock = SlaveClock;

asio::awaitable<void> SlaveServer::on_message(Session& s, const json& m) {
  s.last_heard = Clock::now();
  const std::string type_name = text_field(m, "type");
  const MessageType type = message_type(type_name);
  if (const Rule rule = served_rule(s.phase, type); rule != Rule::kAccept) {
    // Still greeting: nothing else is done for such a peer (one `error`, one line, closed).
    // Greeted: the session and its run go on as they were (the master decides whether to abort).
    if (s.phase == ServedPhase::kGreeting) {
      co_await end_greeting(s, refusal(rule, type_name));
    } else {
      co_await refuse(s, refusal(rule, type_name));
    }
    co_return;
  }
  switch (type) {
    case MessageType::kHello:
    case MessageType::kAuth: co_await greet(s, m); break;
    case MessageType::kPing: break;
    case MessageType::kBye: s.end_reason = "master said goodbye"; break;
    case MessageType::kAbort:
      s.end_reason = fmt::format("master aborted: {}",
                                 core::printable(text_field(m, "reason", "no reason given")));
      break;
    case MessageType::kInterval: co_await on_interval(s, m); break;
    case MessageType::kLoad: co_await on_load(s, m); break;
    case MessageType::kStop:
      if (s.phase != ServedPhase::kRunning) {
        s.end_reason = "master stopped the run before it started";
      } else if (s.children) {
        co_await on_proxied(s, type, m);
      } else {
        co_await send_results(s, RunEnd::kStopped);
      }
      break;
    default:
      if (s.children) {
        co_await on_proxied(s, type, m);
      } else {
        co_await on_step_message(s, type, m);
      }
  }
}

asio::awaitable<void> SlaveServer::refuse(Session& s, std::string why) {
  s.refusals.add(fmt::format("master {}: refused: {}", s.who, why));
  json out = message("error", {{"message", fmt::format("slave: {}", why)}});
  auto sent = co_await s.channel.send(std::move(out));
  (void)sent;
}

asio::awaitable<void> SlaveServer::end_greeting(Session& s, std::string why) {
  json out = message("error", {{"message", fmt::format("slave: {}", why)}});
  auto sent = co_await s.channel.send(std::move(out));
  (void)sent;
  s.end_reason = std::move(why);
}

asio::awaitable<void> SlaveServer::on_start(Session& s, const json& m) {
  LoadedRun& run = *s.run;
  const auto port = uint_field(m, "master_port");
  if (!port || *port > 65535) {
    co_await refuse(s, "'start' without a valid master_port (0..65535)");
    co_return;
  }
  s.phase = served_next(s.phase, MessageType::kStart);
  if (run.host_counters) run.kernel_series.emplace();
  if (run.master_side) {
    run.engine->set_targets(targets_from_json(m.value("targets", json::object())));
  } else {
    engine::HostTarget peer{s.master_address, static_cast<std::uint16_t>(*port), {}};
    // A child of a slave: the master's address as its parent saw it (a socketpair has none).
    if (const auto it = m.find("master_address"); it != m.end() && it->is_string()) {
      boost::system::error_code bad;
      const auto address = asio::ip::make_address(it->get<std::string>(), bad);
      if (!bad) peer.address = address;
    }
    peer.shard_ports = shard_ports_from_json(m.value("master_ports", json()));
    run.engine->set_peer(std::move(peer));
  }
  run.engine->start();
}

asio::awaitable<void> SlaveServer::on_step_message(Session& s, MessageType type, const json& m) {
  if (type == MessageType::kStart) {
    co_await on_start(s, m);
    co_return;
  }
  LoadedRun& run = *s.run;
  if (type == MessageType::kFinish) {
    if (auto why = run.barrier.refuse_finish(); !why.empty()) {
      co_await refuse(s, std::move(why));
    } else {
      co_await send_results(s, RunEnd::kFinished);
    }
    co_return;
  }
  const std::string type_name(to_string(type));
  const auto step = uint_field(m, "step");
  if (auto why = run.barrier.refuse(type_name, step); !why.empty()) {
    co_await refuse(s, std::move(why));
    co_return;
  }
  const auto k = static_cast<std::size_t>(*step);
  if (type == MessageType::kProceed) {
    if (!run.timed.empty() && k == run.timed.front()) {
      run.cpu_before = sampling::sample_cpu();
      run.nic_before = sampling::sample_nics();
      if (run.host_counters) run.kernel.start();
    }
    run.barrier.release(k, Clock::now());
    run.engine->release(k);
  } else if (type == MessageType::kWritten) {
    if (!append_written(m, run.master_written)) {
      co_await refuse(s, "'written' that is malformed");
    }
  } else {
    co_await on_end_step(s, k, m);
  }
}

asio::awaitable<void> SlaveServer::on_end_step(Session& s, std::size_t step, const json& m) {
  LoadedRun& run = *s.run;
  const auto connected = port_counts_from(m);
  if (!connected) {
    co_await refuse(s, "'end_step' without a valid 'connected' list ([[port, connections], ...])");
    co_return;
  }
  run.barrier.end(step);
  if (const auto ms = uint_field(m, "drain_ms")) {
    run.drain_for = std::chrono::milliseconds(std::min<std::uint64_t>(*ms, 3'600'000));
  }
  // The master's count for this process: the ports its listeners are bound to (a slave in
  // several processes relays the whole list to each).
  run.master_connected = 0;
  for (const auto& [port, n] : *connected) {
    if (run.engine->listens_on(port)) run.master_connected += n;
  }
  run.engine->end_txn(step, std::chrono::milliseconds(30), run.master_connected,
                      run.master_written);
  // An iterations step may be over here already: then the drain starts now, else once the
  // quiescence cut has ended it.
  if (run.barrier.drain_due(step)) {
    if (!co_await report_missing_connections(s, step)) s.end_reason = "send failed";
    start_drain(s, step);
  }
}

asio::awaitable<void> SlaveServer::send_results(Session& s, RunEnd end) {
  LoadedRun& run = *s.run;
  const auto stopped_at = Clock::now();
  // Stopped in the timed part: its CPU and NIC are measured up to now, as the master's are.
  if (end == RunEnd::kStopped && run.cpu_before && !run.cpu) {
    run.cpu = sampling::cpu_usage(*run.cpu_before, sampling::sample_cpu());
    run.nic = sampling::nic_rates(*run.nic_before, sampling::sample_nics());
    run.kernel.finish();
    run.rss_after = sampling::resident_bytes();
  }
  engine::Engine& engine = *run.engine;
  engine.stop();  // cuts what still runs; closes the data listeners on this thread
  auto result = co_await run_off_thread(context_, [&engine] { return engine.finish(); });
  co_await asio::post(context_, asio::use_awaitable);
  // The step the stop cut short: its window ends at the stop (the engine closes a step's window
  // only when its strands finish it).
  const auto released = run.barrier.released();
  const auto done = run.barrier.last_done();
  if (end == RunEnd::kStopped && released && (!done || *done < *released) &&
      *released < result.windows.size()) {
    result.windows[*released].elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(
        stopped_at - run.barrier.released_at());
  }
  result.processes.push_back(
      process_record(run.process_name, result, run.rss_before, run.rss_after, run.cpu));
  json cpu = nullptr;
  json nic = nullptr;
  if (run.cpu) sampling::to_json(cpu, *run.cpu);
  if (run.nic) sampling::to_json(nic, *run.nic);
  json kernel = nullptr;
  if (run.kernel.deltas()) sampling::to_json(kernel, *run.kernel.deltas());
  json system = std::move(run.system);
  log_run_strangers(s);  // the listeners are closed and their last lines in
  s.run.reset();
  s.phase =
      served_next(s.phase, end == RunEnd::kFinished ? MessageType::kFinish : MessageType::kStop);
  log(fmt::format("master {}: run {}", s.who, end == RunEnd::kFinished ? "finished" : "stopped"));
  json out = message("results", {{"result", results::to_json(result)},
                                 {"cpu", cpu},
                                 {"nic", nic},
                                 {"kernel", kernel},
                                 {"system", system}});
  auto sent = co_await s.channel.send(std::move(out));
  if (!std::holds_alternative<std::monostate>(sent)) s.end_reason = "send failed";
}

asio::awaitable<void> SlaveServer::on_interval(Session& s, const json& m) {
  const auto n = interval_requested(m);
  if (n && s.children) {
    // Each child process counts its own strands; their parts are not gathered (yet), and a
    // share is not the slave's count.
    json out = interval_missing_message(
        *n, fmt::format("the slave runs in {} processes; its counts arrive with its results",
                        s.children->size()));
    auto sent = co_await s.channel.send(std::move(out));
    if (!std::holds_alternative<std::monostate>(sent)) s.end_reason = "send failed";
    co_return;
  }
  if (!n) {
    std::string why = "'interval' without an interval number";
    s.refusals.add(fmt::format("master {}: refused: {}", s.who, why));
    json out = message("error", {{"message", fmt::format("slave: {}", why)}});
    auto sent = co_await s.channel.send(std::move(out));
    (void)sent;
    co_return;
  }
  // Answered in the order asked: takes complete in order, and so do the events they push.
  std::optional<sampling::ProtocolCounterMap> kernel;
  if (s.run->kernel_series) kernel = s.run->kernel_series->next();
  s.run->engine->take_interval(context_, [&s, n = *n, kernel = std::move(kernel)](
                                             const std::vector<results::SlotStats>& slots) {
    if (!s.run) return;
    s.events.push(IntervalTaken{interval_counts_message(n, txn_datagrams(s.run->plan, slots),
                                                        txn_tcp(s.run->plan, slots), kernel)});
  });
}

asio::awaitable<bool> SlaveServer::report_missing_connections(Session& s, std::size_t step) {
  const LoadedRun& run = *s.run;
  const std::uint64_t accepted = run.engine->accepted_connections();
  if (accepted >= run.master_connected) co_return true;
  // The step was cut after the long quiet spell with connections the master counted as
  // established still missing: they never reached a listener. Not a silent shortfall.
  const std::string why = fmt::format(
      "step {}: the master established {} TCP data connection{} to this slave{} since the run "
      "began, but only {} reached its listeners (the rest were still missing after {} s of "
      "quiet: a full accept queue dropped their handshakes, the slave closed them for a late or "
      "wrong header (its log says), or something on the path drops them)",
      step, run.master_connected, run.master_connected == 1 ? "" : "s",
      run.process_name == "slave" ? "" : fmt::format(" ({})", run.process_name), accepted,
      engine::kAcceptQuiet.count());
  log(fmt::format("master {}: {}", s.who, why));
  json out = message("error", {{"message", fmt::format("slave: {}", why)}});
  auto sent = co_await s.channel.send(std::move(out));
  co_return std::holds_alternative<std::monostate>(sent);
}

void SlaveServer::start_drain(Session& s, std::size_t step) {
  LoadedRun& run = *s.run;
  run.engine->drain(step, std::exchange(run.master_written, {}), Clock::now() + run.drain_for,
                    context_, [&s, step](std::vector<engine::DrainShortfall> shortfalls) {
                      s.events.push(LocalDrained{step, std::move(shortfalls)});
                    });
}

}  // namespace volley::control
