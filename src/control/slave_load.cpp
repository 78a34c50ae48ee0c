// A slave's session loads a profile: parse, mirror, compile, check the slave's limits, build the
// engine and open its listeners; or, for a run spread over processes, start the children and
// have each load its shard.
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

namespace volley::control {

using namespace slave_events;  // NOLINT(google-build-using-namespace): this file handles them

namespace asio = boost::asio;
using asio::ip::tcp;
using nlohmann::json;

namespace {

/// The first limit `plan` exceeds, as the sentence to send back, or "".
std::string check_limits(const engine::Plan& plan, std::size_t workers, const SlaveLimits& limits) {
  if (plan.total_strands > limits.max_strands) {
    return fmt::format(
        "the profile asks for {} strands; this slave allows at most {} per run "
        "(volley serve --max-strands)",
        plan.total_strands, limits.max_strands);
  }
  if (workers > limits.max_workers) {
    return fmt::format(
        "the master asks for {} workers; this slave allows at most {} per run "
        "(volley serve --max-workers)",
        workers, limits.max_workers);
  }
  if (plan.io_buffer_bytes > limits.max_io_bytes) {
    return fmt::format(
        "the profile reads or writes {} bytes in one call; this slave allows at most "
        "{} (volley serve --max-io-bytes)",
        plan.io_buffer_bytes, limits.max_io_bytes);
  }
  std::vector<std::uint64_t> opens(plan.groups.size(), 0);  // connections a strand opens
  for (const auto& c : plan.connections) ++opens[c.group];
  std::uint64_t connections = 0;
  std::chrono::nanoseconds duration{0};
  for (std::size_t g = 0; g < plan.groups.size(); ++g) {
    const auto& group = plan.groups[g];
    const std::uint64_t per_strand = opens[g];
    for (const auto& txn : group.txns) {
      if (const auto* d = std::get_if<profile::Duration>(&txn.bound)) duration += d->length;
      for (const auto& op : txn.ops) {
        const auto* think = std::get_if<profile::ThinkOp>(&op.spec);
        if (think != nullptr && think->duration > limits.max_think) {
          return fmt::format(
              "the profile thinks for {} s at once; this slave allows at most {} s "
              "(volley serve --max-think)",
              std::chrono::duration_cast<std::chrono::seconds>(think->duration).count(),
              limits.max_think.count());
        }
      }
    }
    // Saturating: the strand count is already bounded, but keep the sum from wrapping.
    const std::uint64_t add =
        per_strand > limits.max_connections
            ? limits.max_connections + 1
            : std::min<std::uint64_t>(per_strand * group.strands, limits.max_connections + 1);
    connections = std::min<std::uint64_t>(connections + add, limits.max_connections + 1);
  }
  if (connections > limits.max_connections) {
    return fmt::format(
        "the profile opens more than {} connections; this slave allows at most {} "
        "per run (volley serve --max-connections)",
        limits.max_connections, limits.max_connections);
  }
  if (duration > limits.max_run) {
    return fmt::format(
        "the profile's timed steps last {} s; this slave allows at most {} s per run "
        "(volley serve --max-run)",
        std::chrono::duration_cast<std::chrono::seconds>(duration).count(), limits.max_run.count());
  }
  return {};
}

}  // namespace

namespace {

/// A profile loaded and planned, not yet built into an engine; or why not (the sentence for
/// `rejected`, and whether it is a limit, which the slave also logs).
struct Prepared {
  std::unique_ptr<LoadedRun> run;
  std::string why;
  bool beyond_limit = false;
};

/// Parses the load's profile, mirrors it (a slave) or takes it as written (a master's child),
/// compiles it and checks it against the slave's limits. No I/O.
Prepared prepare(const LoadRequest& load, const SlaveLimits& limits, std::size_t workers) {
  if (load.profile_text.size() > limits.max_profile_bytes) {
    return {nullptr, fmt::format("slave: the profile is {} bytes; this slave accepts at most {} "
                                 "(volley serve --max-profile-bytes)",
                                 load.profile_text.size(), limits.max_profile_bytes)};
  }
  profile::Variables vars;
  vars.bindings = load.variables;
  auto parsed = profile::parse_profile(load.profile_text, load.profile_file, vars);
  if (!parsed.profile) return {nullptr, parsed.diagnostics.format(nullptr)};
  // The master capped its durations (--max-duration); its child processes run its side from this.
  if (load.max_duration_ns > 0) {
    profile::cap_durations(*parsed.profile, std::chrono::nanoseconds(load.max_duration_ns));
  }
  auto run = std::make_unique<LoadedRun>();
  run->rss_before = sampling::resident_bytes();
  run->master_side = load.master_side;
  run->host_counters = !(load.shard_count > 1 || load.master_side);
  run->profile = load.master_side ? *parsed.profile : profile::mirror(*parsed.profile, load.host);
  core::Diagnostics diags;
  auto plan = engine::compile(run->profile, load.file_sets, diags);
  if (!plan) return {nullptr, diags.format(nullptr)};
  run->plan = std::move(*plan);
  run->barrier = StepBarrier(run->plan.txn_count);
  run->timed = engine::timed_steps(run->plan);
  if (auto problem = check_limits(run->plan, workers, limits); !problem.empty()) {
    return {nullptr, problem, true};
  }
  return {std::move(run), {}};
}

/// The certificate the run's TLS accepts show (its own or its child processes'): its parent's,
/// for a child; else --tls-cert's; else a fresh one. None when it accepts no TLS. Why not, or "".
std::string take_tls_identity(LoadedRun& run, const LoadRequest& load,
                              const std::shared_ptr<const transport::TlsIdentity>& configured) {
  if (engine::tls_uses(run.plan).accepts.empty()) return {};
  if (!load.tls_cert_pem.empty()) {
    auto parent = transport::TlsIdentity::from_pem(load.tls_cert_pem, load.tls_key_pem);
    if (auto* why = std::get_if<std::string>(&parent)) return *why;
    run.tls_identity =
        std::make_shared<const transport::TlsIdentity>(std::get<transport::TlsIdentity>(parent));
    return {};
  }
  if (configured) {
    run.tls_identity = configured;
    return {};
  }
  auto fresh = transport::TlsIdentity::generate();
  if (auto* why = std::get_if<std::string>(&fresh)) return *why;
  run.tls_identity =
      std::make_shared<const transport::TlsIdentity>(std::get<transport::TlsIdentity>(fresh));
  return {};
}

}  // namespace

asio::awaitable<void> SlaveServer::reject(Session& s, std::string why) {
  json out = message("rejected", {{"message", std::move(why)}});
  auto sent = co_await s.channel.send(std::move(out));
  (void)sent;
}

asio::awaitable<void> SlaveServer::on_load(Session& s, const json& m) {
  std::string error;
  auto load = load_from_json(m, error);
  if (!load) {
    co_await reject(s, std::move(error));
    co_return;
  }
  const std::size_t workers = load->workers > 0 ? load->workers : settings_.default_workers;
  Prepared prepared = prepare(*load, settings_.limits, workers);
  if (!prepared.run) {
    if (prepared.beyond_limit) {
      s.refusals.add(fmt::format("master {}: refused the profile: {}", s.who, prepared.why));
      prepared.why = fmt::format("slave: {}", prepared.why);
    }
    co_await reject(s, std::move(prepared.why));
    co_return;
  }
  std::unique_ptr<LoadedRun> loaded = std::move(prepared.run);
  if (auto why = take_tls_identity(*loaded, *load, settings_.tls_identity); !why.empty()) {
    co_await reject(s, fmt::format("slave: {}", why));
    co_return;
  }
  const bool child = load->shard_count > 1 || load->master_side;
  if (child) {
    loaded->process_name =
        fmt::format("{} process {} of {}", load->master_side ? "master" : "slave",
                    load->shard_index + 1, load->shard_count);
  } else if (const auto processes = process::process_count(
                 loaded->profile, loaded->plan, process::machine_budget(settings_.processes));
             processes > 1) {
    s.proxied_timed = loaded->timed;
    co_await load_children(s, *load, processes, workers, loaded->tls_identity);
    co_return;
  }
  // Reading the snapshot runs `tc`: off the control thread, like every helper.
  loaded->system =
      co_await run_off_thread(context_, [] { return sampling::read_system_snapshot(); });
  if (auto why = build_engine(s, *loaded, *load, workers); !why.empty()) {
    co_await reject(s, fmt::format("slave: {}", why));
    co_return;
  }
  json ports = json::object();
  for (const auto& [requested, actual] : loaded->engine->listener_ports()) {
    ports[std::to_string(requested)] = actual;
  }
  s.run = std::move(loaded);
  s.phase = served_next(s.phase, MessageType::kLoad);
  log(fmt::format("master {}: loaded profile '{}' ({} strands)", s.who,
                  core::printable(s.run->profile.name), s.run->plan.total_strands));
  json out = message("loaded", {{"ports", ports}});
  if (s.run->tls_identity) out["tls_fingerprint"] = s.run->tls_identity->fingerprint();
  out["io"] = (child ? load->io : settings_.io) == engine::IoEngine::kUring ? "uring" : "epoll";
  // More than one negotiated listener (a big run, or a child of a run in processes): the master
  // spreads its strands over them.
  if (const auto& listeners = s.run->engine->negotiated_ports(); listeners.size() > 1 || child) {
    out["shard_ports"] = {{"0", listeners}};
  }
  auto sent = co_await s.channel.send(std::move(out));
  if (!std::holds_alternative<std::monostate>(sent)) s.end_reason = "send failed";
}

std::string SlaveServer::build_engine(Session& s, LoadedRun& run, const LoadRequest& load,
                                      std::size_t workers) {
  const bool child = load.shard_count > 1 || load.master_side;
  engine::EngineConfig config;
  config.workers = workers;
  config.seed = load.seed;
  config.token = load.token ^ s.data_mask;
  config.peers = std::max<std::uint32_t>(1, load.peers);
  config.header_timeout = settings_.limits.header_timeout;
  run.strangers =
      std::make_shared<core::ThrottledLog>([this](const std::string& line) { log(line); },
                                           kRefusalLogInterval, "data connections closed");
  // Called on the workers' threads (their listeners): throttled and logged on this one, in this
  // run's own log even when it comes after the run is gone.
  config.on_rejected_connection = [this, strangers = run.strangers](const std::string& line) {
    asio::post(context_, [strangers, line] { strangers->add(line); });
  };
  config.listen_address = s.local_address;
  if (child) {
    boost::system::error_code bad;
    config.listen_address = asio::ip::make_address(load.listen_address, bad);
    if (bad) config.listen_address = asio::ip::address_v4::loopback();
  }
  config.slave_side = !load.master_side;
  config.shard_index = load.shard_index;
  config.shard_count = load.shard_count;
  config.record_latency = load.record_latency;
  config.sample_tcp = load.sample_tcp;
  if (const transport::TlsUses uses = engine::tls_uses(run.plan); uses.any()) {
    auto made = transport::TlsSetup::make(uses, run.tls_identity,
                                          transport::TlsTrust{load.tls_pins, load.tls_ca_file});
    if (auto* why = std::get_if<std::string>(&made)) return *why;
    config.tls = std::get<std::shared_ptr<const transport::TlsSetup>>(std::move(made));
  }
  config.count_strands = load.count_strands;
  config.io = child ? load.io : settings_.io;
  config.on_txn_done = [this, &s](std::size_t step) {
    asio::post(context_, [&s, step] { s.events.push(LocalStepDone{step}); });
  };
  try {
    run.engine = std::make_unique<engine::Engine>(run.plan, std::move(config));
  } catch (const std::exception& e) {
    // Out of memory or descriptors while building the workers: this run cannot be; the session
    // and the slave go on.
    log(fmt::format("master {}: cannot build the run: {}", s.who, e.what()));
    return fmt::format("cannot build the run: {}", e.what());
  }
  return run.engine->open_listeners(context_);
}

asio::awaitable<void> SlaveServer::load_children(
    Session& s, const LoadRequest& load, std::uint32_t processes, std::size_t workers,
    std::shared_ptr<const transport::TlsIdentity> tls_identity) {
  ChildSetSettings settings;
  settings.executable = settings_.child_executable;
  settings.shard_count = processes;
  // The run's workers, shared out: each process has its own.
  settings.workers = std::max<std::size_t>(1, (workers + processes - 1) / processes);
  auto spawned = ChildSet::spawn(context_, settings);
  if (auto* problem = std::get_if<std::string>(&spawned)) {
    {
      std::string why = fmt::format("slave: {}", *problem);
      co_await reject(s, std::move(why));
    }
    co_return;
  }
  s.children = std::move(std::get<std::unique_ptr<ChildSet>>(spawned));
  LoadRequest mine = load;
  mine.listen_address = s.local_address.to_string();
  if (tls_identity) {  // the children accept as this slave: with its certificate
    mine.tls_cert_pem = tls_identity->cert_pem();
    mine.tls_key_pem = tls_identity->key_pem();
  }
  mine.token = load.token ^ s.data_mask;
  mine.io = settings_.io;  // the children's channel is a trusted socketpair
  if (auto problem = co_await s.children->load(std::move(mine)); !problem.empty()) {
    log(fmt::format("master {}: {}", s.who, problem));
    {
      std::string why = fmt::format("slave: {}", problem);
      co_await reject(s, std::move(why));
    }
    s.end_reason = problem;
    co_return;
  }
  s.children->listen(
      [&s](std::size_t i, json m) {
        s.events.push(ChildMessage{i, std::move(m)});
      },
      [&s](std::size_t i, ChannelError e) {
        s.events.push(ChildLost{i, std::move(e)});
      });
  // One port per process for each listener: the master sends strand s to process s % count.
  json shard_ports = {{"0", spread_ports(s.children->negotiated())}};
  json first = json::object();
  for (const auto& [requested, actual] : s.children->ports().front())
    first[std::to_string(requested)] = actual;
  log(fmt::format("master {}: loaded the profile in {} processes", s.who, processes));
  s.phase = served_next(s.phase, MessageType::kLoad);
  json out =
      message("loaded", {{"ports", std::move(first)}, {"shard_ports", std::move(shard_ports)}});
  if (tls_identity) out["tls_fingerprint"] = tls_identity->fingerprint();
  auto sent = co_await s.channel.send(std::move(out));
  if (!std::holds_alternative<std::monostate>(sent)) s.end_reason = "send failed";
}

}  // namespace volley::control
