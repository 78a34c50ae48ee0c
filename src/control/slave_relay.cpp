// A slave's run spread over child processes: the master's messages relayed to every child, and
// the children's answers, judged by the peer table (ChildSet), merged into one answer each.
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
#include "volley/results/result_json.hpp"

namespace volley::control {

using namespace slave_events;  // NOLINT(google-build-using-namespace): this file handles them

namespace asio = boost::asio;
using asio::ip::tcp;
using nlohmann::json;

asio::awaitable<void> SlaveServer::on_proxied(Session& s, MessageType type, const json& m) {
  std::string problem;
  if (type == MessageType::kWritten) {
    // Each child drains the connections of its own strands: it gets only their entries.
    std::vector<engine::ConnectionBytes> entries;
    const auto step = uint_field(m, "step");
    problem = !step || !append_written(m, entries) ? "'written' that is malformed" : "";
    if (problem.empty())
      problem = co_await s.children->send_written(static_cast<std::size_t>(*step), entries);
  } else {
    // The host's kernel counters over the timed part: sampled here, once for all the children.
    if (type == MessageType::kProceed && !s.proxied_timed.empty() &&
        uint_field(m, "step") == s.proxied_timed.front()) {
      s.proxied_kernel.start();
    }
    if (type == MessageType::kStop) s.proxied_kernel.finish();
    json relayed = m;
    // The children connect back to the master by the address this session sees it at.
    if (type == MessageType::kStart) relayed["master_address"] = s.master_address.to_string();
    problem = co_await s.children->send_all(std::move(relayed));
    // Each child judges the message by its own barrier, and says so if it refuses.
    if (type == MessageType::kStart) s.phase = served_next(s.phase, type);
  }
  if (!problem.empty()) {
    s.end_reason = problem;
    json out = message("error", {{"message", fmt::format("slave: {}", problem)}});
    auto sent = co_await s.channel.send(std::move(out));
    (void)sent;
  }
}

asio::awaitable<void> SlaveServer::on_child(Session& s, std::size_t child, const json& m) {
  auto send = [&s](json out) -> asio::awaitable<bool> {
    auto sent = co_await s.channel.send(std::move(out));
    co_return std::holds_alternative<std::monostate>(sent);
  };
  ChildSet& children = *s.children;
  if (auto problem = children.note(child, m); !problem.empty()) {
    log(fmt::format("master {}: {}", s.who, problem));
    s.end_reason = problem;
    json out = message("error", {{"message", fmt::format("slave: {}", problem)}});
    co_await send(std::move(out));
    co_return;
  }
  const std::string type = text_field(m, "type");
  if (type == "written") {
    // The master drains to what every process wrote: relayed as it comes, before the step_done.
    if (!co_await send(m)) s.end_reason = "send failed";
  } else if (type == "drained") {
    const auto step = static_cast<std::size_t>(uint_field(m, "step").value_or(0));
    if (children.all_drained(step)) {
      if (!co_await send(children.merged_drained(step))) s.end_reason = "send failed";
    }
  } else if (type == "step_done") {
    const auto step = static_cast<std::size_t>(uint_field(m, "step").value_or(0));
    if (children.all_done(step) && (!s.reported_step || *s.reported_step < step)) {
      if (!s.proxied_timed.empty() && step == s.proxied_timed.back()) s.proxied_kernel.finish();
      s.reported_step = step;
      json out = message("step_done", {{"step", step}});
      if (!co_await send(std::move(out))) s.end_reason = "send failed";
    }
  } else if (type == "results" && children.all_results()) {
    results::RunResult merged;
    if (auto problem = children.merge_results(merged); !problem.empty()) {
      s.end_reason = problem;
      json out = message("error", {{"message", fmt::format("slave: {}", problem)}});
      co_await send(std::move(out));
      co_return;
    }
    // The host's CPU, NIC and snapshot as the first child saw them (one host); the process CPU
    // is every child's added up.
    const auto parts = children.results();
    json cpu = parts.front().value("cpu", json());
    if (auto usage = cpu_usage_from_json(cpu); usage && usage->process) {
      for (std::size_t i = 1; i < parts.size(); ++i) {
        const auto other = cpu_usage_from_json(parts[i].value("cpu", json()));
        if (!other || !other->process) continue;
        usage->process->user_s += other->process->user_s;
        usage->process->sys_s += other->process->sys_s;
      }
      auto& p = *usage->process;
      p.cores = usage->wall_s > 0 ? (p.user_s + p.sys_s) / usage->wall_s : 0;
      p.core_pct = p.cores * 100;
      sampling::to_json(cpu, *usage);
    }
    log(fmt::format("master {}: run finished ({} processes)", s.who, children.size()));
    json kernel = nullptr;
    if (s.proxied_kernel.deltas()) sampling::to_json(kernel, *s.proxied_kernel.deltas());
    json out = message("results", {{"result", results::to_json(merged)},
                                   {"cpu", cpu},
                                   {"nic", parts.front().value("nic", json())},
                                   {"kernel", kernel},
                                   {"system", parts.front().value("system", json())}});
    if (!co_await send(std::move(out))) s.end_reason = "send failed";
    // The run is over: its processes go, and the session may load another.
    co_await s.children->close();
    s.children.reset();
    s.phase = ServedPhase::kIdle;
  }
}

}  // namespace volley::control
