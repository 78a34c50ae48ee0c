#include "volley/control/slave_server.hpp"

#include <optional>
#include <variant>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "volley/control/channel.hpp"
#include "volley/control/event_queue.hpp"
#include "volley/control/message.hpp"
#include "volley/engine/engine.hpp"
#include "volley/profile/mirror.hpp"
#include "volley/profile/parser.hpp"
#include "volley/sampling/cpu_sampler.hpp"
#include "volley/sampling/nic_sampler.hpp"
#include "volley/sampling/system_snapshot.hpp"

namespace volley::control {

namespace asio = boost::asio;
using asio::ip::tcp;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
constexpr auto kTick = std::chrono::milliseconds(500);
constexpr auto kHelloTimeout = std::chrono::seconds(10);

struct PeerMessage {
  json message;
};
struct PeerLost {
  ChannelError error;
};
struct LocalStepDone {
  std::size_t step;
};
struct Tick {};
struct Abort {};
struct ReaderExited {};
using SlaveEvent = std::variant<PeerMessage, PeerLost, LocalStepDone, Tick, Abort, ReaderExited>;

/// Everything a loaded profile needs on the slave, destroyed together when the run ends.
struct LoadedRun {
  profile::Profile profile;
  engine::Plan plan;
  std::vector<std::size_t> timed;
  std::unique_ptr<engine::Engine> engine;
  bool started = false;  ///< Loaded until the master's start, Running after it
  std::optional<sampling::CpuSample> cpu_before;
  std::optional<sampling::NicSample> nic_before;
  std::optional<sampling::CpuUsage> cpu;
  std::optional<sampling::NicRates> nic;
  nlohmann::json system;  ///< this host's snapshot, read at load time (before the run)
};

}  // namespace

SlaveServer::SlaveServer(asio::io_context& context, SlaveSettings settings)
    : context_(context), settings_(std::move(settings)), acceptor_(context) {}

std::string SlaveServer::listen(const tcp::endpoint& endpoint) {
  boost::system::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return fmt::format("cannot listen on {}:{}: {}", endpoint.address().to_string(),
                       endpoint.port(), ec.message());
  }
  return {};
}

std::uint16_t SlaveServer::port() const {
  boost::system::error_code ec;
  const auto endpoint = acceptor_.local_endpoint(ec);
  return ec ? 0 : endpoint.port();
}

void SlaveServer::start() { asio::co_spawn(context_, accept_loop(), asio::detached); }

void SlaveServer::stop() {
  stopping_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  for (auto& [id, hook] : abort_hooks_) hook();
}

asio::awaitable<void> SlaveServer::accept_loop() {
  while (!stopping_) {
    auto [ec, socket] = co_await acceptor_.async_accept(kAwait);
    if (ec == asio::error::operation_aborted || stopping_) break;
    if (ec) continue;  // EMFILE and friends: the master sees its own error; keep serving
    asio::co_spawn(context_, serve(std::move(socket)), [this](std::exception_ptr e) {
      if (!e) return;
      // Sessions treat peer input as values; an exception here is a bug, and it must cost one
      // session, not the slave.
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        if (settings_.log) settings_.log(std::string("session ended by an internal error: ") + ex.what());
      }
    });
  }
}

asio::awaitable<void> SlaveServer::serve(tcp::socket socket) {
  const std::uint64_t id = next_session_++;
  ++sessions_;
  auto log = [this](const std::string& line) {
    if (settings_.log) settings_.log(line);
  };
  Channel channel(std::move(socket));
  const std::string who = channel.peer();
  boost::system::error_code ec;
  const auto local_address = channel.socket().local_endpoint(ec).address();
  const auto master_address = channel.socket().remote_endpoint(ec).address();
  log(fmt::format("master {} connected", who));

  EventQueue<SlaveEvent> events(context_);
  abort_hooks_[id] = [&events] { events.push(Abort{}); };
  bool reader_alive = true;
  asio::co_spawn(
      context_,
      [&]() -> asio::awaitable<void> {
        for (;;) {
          auto got = co_await channel.receive();
          if (auto* error = std::get_if<ChannelError>(&got)) {
            events.push(PeerLost{std::move(*error)});
            break;
          }
          events.push(PeerMessage{std::get<json>(std::move(got))});
        }
        events.push(ReaderExited{});
      },
      asio::detached);
  asio::steady_timer ticker(context_);
  bool ticking = true;
  std::function<void()> arm_tick = [&] {
    ticker.expires_after(kTick);
    ticker.async_wait([&](const boost::system::error_code& tick_ec) {
      if (tick_ec || !ticking) return;
      events.push(Tick{});
      arm_tick();
    });
  };
  arm_tick();

  auto send = [&](json m) -> asio::awaitable<bool> {
    auto sent = co_await channel.send(std::move(m));
    co_return std::holds_alternative<std::monostate>(sent);
  };

  std::unique_ptr<LoadedRun> run;
  bool greeted = false;
  auto last_heard = Clock::now();
  const auto session_start = Clock::now();
  std::string end_reason;

  auto end_run = [&]() -> asio::awaitable<void> {
    if (!run) co_return;
    if (run->engine) {
      run->engine->stop();
      run->engine->finish();
      // Let any step-done notification the workers posted before they stopped run now, while
      // the event queue it targets still exists.
      co_await asio::post(context_, asio::use_awaitable);
    }
    run.reset();
  };

  while (end_reason.empty()) {
    SlaveEvent event = co_await events.next();
    if (auto* lost = std::get_if<PeerLost>(&event)) {
      end_reason = lost->error.closed_by_peer ? "master closed the connection" : lost->error.message;
      if (!lost->error.closed_by_peer) {
        // Tell a peer that sent garbage why it is being dropped (it may not be listening).
        json out = message("error", {{"message", fmt::format("slave: {}", lost->error.message)}});
        co_await send(std::move(out));
      }
      break;
    }
    if (std::holds_alternative<Abort>(event)) {
      {
        json out = message("abort", {{"reason", "slave is shutting down"}});
        co_await send(std::move(out));
      }
      end_reason = "slave shutting down";
      break;
    }
    if (std::holds_alternative<ReaderExited>(event)) {
      reader_alive = false;
      end_reason = "control connection closed";
      break;
    }
    if (std::holds_alternative<Tick>(event)) {
      const auto now = Clock::now();
      if (!greeted && now - session_start > kHelloTimeout) {
        end_reason = "no greeting within 10 s";
      } else if (greeted && now - last_heard > settings_.silence_timeout) {
        end_reason = fmt::format("master silent for {} s",
                                 std::chrono::duration_cast<std::chrono::seconds>(now - last_heard).count());
      } else if (greeted) {
        {
          json out = message("ping");
          co_await send(std::move(out));
        }
      }
      continue;
    }
    if (auto* done = std::get_if<LocalStepDone>(&event)) {
      if (!run || !run->engine) continue;
      if (!run->timed.empty() && done->step == run->timed.back() && run->cpu_before) {
        run->cpu = sampling::cpu_usage(*run->cpu_before, sampling::sample_cpu());
        run->nic = sampling::nic_rates(*run->nic_before, sampling::sample_nics());
      }
      {
        json out = message("step_done", {{"step", done->step}});
        if (!co_await send(std::move(out))) end_reason = "send failed";
      }
      continue;
    }
    const json& m = std::get<PeerMessage>(event).message;
    last_heard = Clock::now();
    const std::string type = text_field(m, "type");
    if (!greeted) {
      if (auto problem = check_hello(m, who); !problem.empty()) {
        {
          json out = message("error", {{"message", fmt::format("slave: {}", problem)}});
          co_await send(std::move(out));
        }
        end_reason = problem;
        break;
      }
      greeted = true;
      {
        json out = make_hello();
        if (!co_await send(std::move(out))) end_reason = "send failed";
      }
      continue;
    }
    if (type == "ping") continue;
    if (type == "bye") {
      end_reason = "master said goodbye";
      break;
    }
    if (type == "abort") {
      end_reason = fmt::format("master aborted: {}", text_field(m, "reason", "no reason given"));
      break;
    }
    if (type == "load" && !run) {
      std::string error;
      auto load = load_from_json(m, error);
      if (!load) {
        {
          json out = message("rejected", {{"message", error}});
          co_await send(std::move(out));
        }
        continue;
      }
      profile::Variables vars;
      vars.bindings = load->variables;
      auto parsed = profile::parse_profile(load->profile_text, load->profile_file, vars);
      if (!parsed.profile) {
        {
          json out = message("rejected", {{"message", parsed.diagnostics.format(nullptr)}});
          co_await send(std::move(out));
        }
        continue;
      }
      auto loaded = std::make_unique<LoadedRun>();
      loaded->profile = profile::mirror(*parsed.profile, load->host);
      core::Diagnostics diags;
      auto plan = engine::compile(loaded->profile, load->file_sets, diags);
      if (!plan) {
        {
          json out = message("rejected", {{"message", diags.format(nullptr)}});
          co_await send(std::move(out));
        }
        continue;
      }
      loaded->plan = std::move(*plan);
      loaded->timed = engine::timed_steps(loaded->plan);
      loaded->system = sampling::read_system_snapshot();
      engine::EngineConfig config;
      config.workers = load->workers > 0 ? load->workers : settings_.default_workers;
      config.seed = load->seed;
      config.token = load->token;
      config.listen_address = local_address;
      config.slave_side = true;
      config.record_latency = load->record_latency;
      config.on_txn_done = [this, &events](std::size_t step) {
        asio::post(context_, [&events, step] { events.push(LocalStepDone{step}); });
      };
      loaded->engine = std::make_unique<engine::Engine>(loaded->plan, std::move(config));
      if (auto problem = loaded->engine->open_listeners(context_); !problem.empty()) {
        {
          json out = message("rejected", {{"message", fmt::format("slave: {}", problem)}});
          co_await send(std::move(out));
        }
        continue;
      }
      json ports = json::object();
      for (const auto& [requested, actual] : loaded->engine->listener_ports()) {
        ports[std::to_string(requested)] = actual;
      }
      run = std::move(loaded);
      log(fmt::format("master {}: loaded profile '{}' ({} strands)", who, run->profile.name,
                      run->plan.total_strands));
      {
        json out = message("loaded", {{"ports", ports}});
        if (!co_await send(std::move(out))) end_reason = "send failed";
      }
      continue;
    }
    if (type == "start" && run && run->engine && !run->started) {
      run->started = true;
      const auto port = uint_field(m, "master_port").value_or(0);
      if (port > 65535) {
        end_reason = "malformed start message";
        break;
      }
      run->engine->set_peer(engine::HostTarget{master_address, static_cast<std::uint16_t>(port)});
      run->engine->start();
      continue;
    }
    if (type == "proceed" && run && run->started) {
      const auto step_field = uint_field(m, "step");
      if (!step_field || *step_field >= run->plan.txn_count) {
        end_reason = "malformed proceed message";
        break;
      }
      const auto step = static_cast<std::size_t>(*step_field);
      if (!run->timed.empty() && step == run->timed.front()) {
        run->cpu_before = sampling::sample_cpu();
        run->nic_before = sampling::sample_nics();
      }
      run->engine->release(step);
      continue;
    }
    if (type == "end_step" && run && run->started) {
      const auto step_field = uint_field(m, "step");
      if (!step_field || *step_field >= run->plan.txn_count) {
        end_reason = "malformed end_step message";
        break;
      }
      run->engine->end_txn(static_cast<std::size_t>(*step_field));
      continue;
    }
    if (type == "finish" && run && run->started) {
      auto result = run->engine->finish();
      co_await asio::post(context_, asio::use_awaitable);
      json cpu = nullptr;
      json nic = nullptr;
      if (run->cpu) sampling::to_json(cpu, *run->cpu);
      if (run->nic) sampling::to_json(nic, *run->nic);
      json system = std::move(run->system);
      run.reset();
      log(fmt::format("master {}: run finished", who));
      {
        json out = message("results", {{"result", to_json(result)}, {"cpu", cpu}, {"nic", nic}, {"system", system}});
        if (!co_await send(std::move(out))) {
        end_reason = "send failed";
      }
      }
      continue;
    }
    {
      json out = message("error", {{"message", fmt::format("slave: unexpected '{}' message in "
                                                            "this state", type)}});
      co_await send(std::move(out));
    }
    end_reason = fmt::format("unexpected '{}' message", type);
  }

  co_await end_run();
  ticking = false;
  ticker.cancel();
  channel.close();
  abort_hooks_.erase(id);
  // The reader coroutine holds references into this frame: wait until it has left.
  while (reader_alive) {
    SlaveEvent event = co_await events.next();
    if (std::holds_alternative<ReaderExited>(event)) reader_alive = false;
  }
  co_await asio::post(context_, asio::use_awaitable);  // the ticker's cancelled wait runs first
  log(fmt::format("master {} gone ({}); idle", who, end_reason));
  --sessions_;
}

}  // namespace volley::control
