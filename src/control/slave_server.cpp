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
#include "volley/control/connected_wire.hpp"
#include "volley/control/step_bytes_wire.hpp"
#include "volley/engine/engine.hpp"
#include "volley/results/result_json.hpp"
#include "volley/sampling/resident_memory.hpp"
#include "volley/profile/duration_cap.hpp"
#include "volley/profile/mirror.hpp"
#include "volley/profile/parser.hpp"
#include "volley/sampling/cpu_sampler.hpp"
#include "volley/sampling/nic_sampler.hpp"
#include "volley/sampling/system_snapshot.hpp"
#include "volley/transport/address_family.hpp"

namespace volley::control {

namespace asio = boost::asio;
using asio::ip::tcp;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
constexpr auto kTick = std::chrono::milliseconds(500);
/// After an accept fails for want of descriptors (EMFILE, ENFILE, ENOBUFS), wait this long before
/// the next attempt instead of spinning on the same error.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);
/// Connections still owing their hello (or their proof of the key), beyond the greeted sessions:
/// each costs a socket and at most a 4 KiB frame until its --hello-timeout. 1,024 in all; one
/// source address holds at most 64: a master says hello within a round trip of its connect, so
/// even a host (or a NAT address) running a sweep's or a CI job's masters at once needs a few
/// places, and only a stranger holds one for the whole --hello-timeout.
constexpr transport::SourceQuota::Limits kAwaitingHelloLimits{64, 1024};
/// Refusals a peer can cause by the thousand go to the log at most once per this.
constexpr auto kRefusalLogInterval = std::chrono::seconds(1);

struct PeerMessage {
  json message;
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
  json message;
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
  json message;
};
struct ChildLost {
  std::size_t child;
  ChannelError error;
};
using SlaveEvent = std::variant<PeerMessage, PeerLost, LocalStepDone, LocalDrained, Tick, Abort,
                                ReaderExited, ChildMessage, ChildLost, IntervalTaken, Evicted>;

/// Everything a loaded profile needs on the slave, destroyed together when the run ends.
struct LoadedRun {
  profile::Profile profile;
  engine::Plan plan;
  std::vector<std::size_t> timed;
  std::unique_ptr<engine::Engine> engine;
  bool started = false;  ///< Loaded until the master's start, Running after it
  /// Where the barrier is: the next step the master may release, the last step it released and
  /// ended, and the last step every local strand finished.
  std::size_t next_release = 0;
  std::optional<std::size_t> released;
  Clock::time_point released_at{};  ///< when `released` was
  std::optional<std::size_t> ended;
  std::optional<std::size_t> done;
  /// The end of a step: what the master wrote per connection in the step running (its `written`
  /// messages), how long the drain may take (its end_step), and the last step drained.
  std::vector<engine::ConnectionBytes> master_written;
  std::chrono::milliseconds drain_for{5000};
  std::optional<std::size_t> drained;
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

/// Why a connection still owing its hello was closed for a newcomer.
std::string eviction_reason(const transport::SourceQuota::Limits& limits,
                            transport::SourceQuota::Verdict why) {
  if (why == transport::SourceQuota::Verdict::kReplacesOwnOldest) {
    return fmt::format("no hello yet, closed to make room for a newer connection from its "
                       "address, which held {}, the most one address may (volley serve "
                       "--hello-timeout)",
                       limits.per_source);
  }
  return fmt::format("no hello yet, closed to make room: {} connections waited for their hello, "
                     "the most this slave holds, and its address held the most of them (volley "
                     "serve --hello-timeout)",
                     limits.total);
}

bool out_of_descriptors(const boost::system::error_code& ec) {
  return ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
         ec == boost::system::errc::too_many_files_open_in_system ||
         ec == asio::error::no_memory;
}

/// The first limit `plan` exceeds, as the sentence to send back, or "".
std::string check_limits(const engine::Plan& plan, std::size_t workers, const SlaveLimits& limits) {
  if (plan.total_strands > limits.max_strands) {
    return fmt::format("the profile asks for {} strands; this slave allows at most {} per run "
                       "(volley serve --max-strands)",
                       plan.total_strands, limits.max_strands);
  }
  if (workers > limits.max_workers) {
    return fmt::format("the master asks for {} workers; this slave allows at most {} per run "
                       "(volley serve --max-workers)",
                       workers, limits.max_workers);
  }
  if (plan.io_buffer_bytes > limits.max_io_bytes) {
    return fmt::format("the profile reads or writes {} bytes in one call; this slave allows at most "
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
          return fmt::format("the profile thinks for {} s at once; this slave allows at most {} s "
                             "(volley serve --max-think)",
                             std::chrono::duration_cast<std::chrono::seconds>(think->duration).count(),
                             limits.max_think.count());
        }
      }
    }
    // Saturating: the strand count is already bounded, but keep the sum from wrapping.
    const std::uint64_t add = per_strand > limits.max_connections
                                  ? limits.max_connections + 1
                                  : std::min<std::uint64_t>(per_strand * group.strands,
                                                            limits.max_connections + 1);
    connections = std::min<std::uint64_t>(connections + add, limits.max_connections + 1);
  }
  if (connections > limits.max_connections) {
    return fmt::format("the profile opens more than {} connections; this slave allows at most {} "
                       "per run (volley serve --max-connections)",
                       limits.max_connections, limits.max_connections);
  }
  if (duration > limits.max_run) {
    return fmt::format("the profile's timed steps last {} s; this slave allows at most {} s per run "
                       "(volley serve --max-run)",
                       std::chrono::duration_cast<std::chrono::seconds>(duration).count(),
                       limits.max_run.count());
  }
  return {};
}

}  // namespace

/// One master's session. Owned by serve()'s frame; the reader coroutine and the engine's
/// notifications point into it, so serve() waits for both to be gone before it ends.
struct SlaveServer::Session {
  Session(asio::io_context& context, tcp::socket socket, std::uint64_t session_id,
          std::function<void(const std::string&)> sink)
      : id(session_id),
        channel(std::move(socket)),
        events(context),
        ticker(context),
        refusals(std::move(sink), kRefusalLogInterval, "control messages refused") {}
  std::uint64_t id;
  Channel channel;
  EventQueue<SlaveEvent> events;
  asio::steady_timer ticker;
  bool ticking = true;
  bool reader_alive = false;
  std::string who;
  asio::ip::address local_address;
  asio::ip::address master_address;
  std::unique_ptr<LoadedRun> run;
  /// The run spread over child processes (this session only relays): see on_proxied().
  std::unique_ptr<ChildSet> children;
  std::optional<std::size_t> reported_step;  ///< the last step_done relayed to the master
  /// A run in child processes: its timed steps, and the host's kernel counters over them.
  std::vector<std::size_t> proxied_timed;
  sampling::KernelCounterWindow proxied_kernel;
  bool greeted = false;  ///< the hello (and, with a key, the authentication) went through
  std::string challenge;  ///< sent in our hello when a key is set
  std::uint32_t data_mask = 0;  ///< unmasks the run token in `load` (auth.hpp)
  Clock::time_point last_heard = Clock::now();
  Clock::time_point started = Clock::now();
  std::string end_reason;
  /// Messages refused (out of order, unknown, beyond a limit): the master can send thousands.
  core::ThrottledLog refusals;
};

SlaveServer::SlaveServer(asio::io_context& context, SlaveSettings settings)
    : context_(context),
      settings_(std::move(settings)),
      acceptor_(context),
      awaiting_hello_(kAwaitingHelloLimits),
      refused_peers_([this](const std::string& line) { log(line); }, kRefusalLogInterval,
                     "control connections refused"),
      log_flush_(context) {}

SlaveServer::~SlaveServer() { refused_peers_.flush(); }

std::string SlaveServer::listen(const tcp::endpoint& endpoint) {
  boost::system::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) ec = transport::take_ipv4_too(acceptor_, endpoint.address());
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    boost::system::error_code ignored;
    acceptor_.close(ignored);  // so that the caller may try another address
    return fmt::format("cannot listen on {}: {}",
                       core::format_host_port(endpoint.address().to_string(), endpoint.port()),
                       ec.message());
  }
  return {};
}

std::uint16_t SlaveServer::port() const {
  boost::system::error_code ec;
  const auto endpoint = acceptor_.local_endpoint(ec);
  return ec ? 0 : endpoint.port();
}

void SlaveServer::start() { asio::co_spawn(context_, accept_loop(), asio::detached); }

void SlaveServer::adopt(tcp::socket socket) {
  ++sessions_;
  // A child's link to its parent: trusted, it takes no place among strangers' connections.
  asio::co_spawn(context_, serve(std::move(socket), next_session_++), [this](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      log(std::string("session ended by an internal error: ") + ex.what());
    }
  });
}

void SlaveServer::stop() {
  stopping_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  log_flush_.cancel();
  for (auto& [id, hook] : abort_hooks_) hook();
}

void SlaveServer::log(const std::string& line) const {
  if (settings_.log) settings_.log(line);
}

void SlaveServer::log_refused_peer(const std::string& line) {
  if (refused_peers_.add(line)) arm_log_flush();
}

void SlaveServer::arm_log_flush() {
  if (log_flush_armed_ || stopping_) return;
  const auto due = refused_peers_.flush_due();
  if (!due) return;  // logged now (or nothing left out)
  log_flush_armed_ = true;
  log_flush_.expires_at(*due);
  log_flush_.async_wait([this](const boost::system::error_code& ec) {
    log_flush_armed_ = false;
    if (ec) {
      refused_peers_.flush();  // shutting down: count them now
      return;
    }
    arm_log_flush();
  });
}

void SlaveServer::log_run_strangers(const Session& s) {
  if (!s.run || !s.run->strangers) return;
  core::ThrottledLog& strangers = *s.run->strangers;
  strangers.flush();
  const std::uint64_t n = strangers.total();
  if (n == 0) return;
  log(fmt::format("master {}: {} data connection{} closed without a valid header in this run "
                  "(a stranger's, another run's, or late: the lines above say why)",
                  s.who, n, n == 1 ? "" : "s"));
}

asio::awaitable<void> SlaveServer::accept_loop() {
  asio::steady_timer backoff(context_);
  while (!stopping_) {
    auto [ec, socket] = co_await acceptor_.async_accept(kAwait);
    if (ec == asio::error::operation_aborted || stopping_) break;
    if (ec) {
      // Out of descriptors: the pending connection stays in the backlog; retrying at once would
      // spin on the same error. Other errors (a peer that reset before accept) need no pause.
      if (out_of_descriptors(ec)) {
        backoff.expires_after(kAcceptBackoff);
        co_await backoff.async_wait(kAwait);
      }
      continue;
    }
    // Every connection owes its hello first: it takes a place (counted here, so a burst of
    // accepts cannot overshoot), the oldest of its own address's, or of the address holding the
    // most (a real master says hello within a round trip: it is never the oldest for long).
    const std::uint64_t id = next_session_++;
    boost::system::error_code no_peer;
    const auto decision = awaiting_hello_.admit(id, socket.remote_endpoint(no_peer).address());
    if (decision.verdict != transport::SourceQuota::Verdict::kAdmitted) {
      if (const auto hook = evict_hooks_.find(decision.evict); hook != evict_hooks_.end()) {
        hook->second(decision.verdict);
      }
    }
    ++sessions_;
    asio::co_spawn(context_, serve(std::move(socket), id), [this](std::exception_ptr e) {
      if (!e) return;
      // serve() catches what a session throws; reaching here is a bug in serve() itself.
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        log(std::string("session ended by an internal error: ") + ex.what());
      }
    });
  }
}

asio::awaitable<void> SlaveServer::serve(tcp::socket socket, std::uint64_t id) {
  // Heap-held: the reader and the engine's notifications hold references into it until the end.
  auto session = std::make_unique<Session>(context_, std::move(socket), id,
                                           [this](const std::string& line) { log(line); });
  Session& s = *session;
  s.who = core::printable(s.channel.peer());
  boost::system::error_code ec;
  // An IPv4 master reaching a dual-stack listener shows as ::ffff:a.b.c.d: its data connections
  // are plain IPv4.
  s.local_address = transport::unmapped(s.channel.socket().local_endpoint(ec).address());
  s.master_address = transport::unmapped(s.channel.socket().remote_endpoint(ec).address());
  s.channel.set_max_frame_bytes(std::min(kMaxGreetingFrameBytes, settings_.limits.max_frame_bytes));
  abort_hooks_[id] = [&s] { s.events.push(Abort{}); };
  evict_hooks_[id] = [&s](transport::SourceQuota::Verdict why) { s.events.push(Evicted{why}); };

  s.reader_alive = true;
  asio::co_spawn(
      context_,
      [&s]() -> asio::awaitable<void> {
        try {
          for (;;) {
            auto got = co_await s.channel.receive();
            if (auto* error = std::get_if<ChannelError>(&got)) {
              s.events.push(PeerLost{std::move(*error)});
              break;
            }
            s.events.push(PeerMessage{std::get<json>(std::move(got))});
          }
        } catch (const std::exception& e) {
          s.events.push(PeerLost{ChannelError{fmt::format("reading from {}: {}", s.who, e.what())}});
        }
        s.events.push(ReaderExited{});
      },
      asio::detached);
  std::function<void()> arm_tick = [&s, &arm_tick] {
    s.ticker.expires_after(kTick);
    s.ticker.async_wait([&s, &arm_tick](const boost::system::error_code& tick_ec) {
      if (tick_ec || !s.ticking) return;
      s.events.push(Tick{});
      arm_tick();
    });
  };
  arm_tick();

  try {
    co_await converse(s);
  } catch (const std::exception& e) {
    // A bug or an allocation failure costs this session only; the cleanup below still runs.
    s.end_reason = fmt::format("internal error: {}", e.what());
  }

  co_await end_run(s);
  s.ticking = false;
  s.ticker.cancel();
  s.channel.close();
  abort_hooks_.erase(id);
  // The reader coroutine holds references into the session: wait until it has left.
  while (s.reader_alive) {
    SlaveEvent event = co_await s.events.next();
    if (std::holds_alternative<ReaderExited>(event)) s.reader_alive = false;
  }
  co_await asio::post(context_, asio::use_awaitable);  // the ticker's cancelled wait runs first
  s.refusals.flush();
  awaiting_hello_.forget(id);
  evict_hooks_.erase(id);
  // A peer that never got past the greeting (a scanner, a master without the key) costs a line,
  // throttled with the others.
  if (s.greeted) {
    log(fmt::format("master {} gone ({}); idle", s.who, s.end_reason));
  } else {
    log_refused_peer(fmt::format("refused {}: {}", s.who, s.end_reason));
  }
  if (s.greeted) --greeted_;
  --sessions_;
}

asio::awaitable<void> SlaveServer::end_run(Session& s) {
  if (s.children) {
    co_await s.children->close();
    s.children.reset();
  }
  if (!s.run) co_return;
  if (s.run->engine) {
    s.run->engine->stop();
    engine::Engine& engine = *s.run->engine;
    // Joining the workers may take as long as their strands need to notice the stop: never on
    // the control thread, which must keep serving other sessions and signals meanwhile.
    try {
      co_await run_off_thread(context_, [&engine] { return engine.finish(); });
    } catch (const std::exception&) {
      engine.finish();  // no thread to spare: join here rather than leave workers running
    }
    // Let any step-done notification the workers posted before they stopped run now, while
    // the event queue it targets still exists.
    co_await asio::post(context_, asio::use_awaitable);
  }
  log_run_strangers(s);  // the listeners are closed and their last lines in
  s.run.reset();
}

asio::awaitable<void> SlaveServer::converse(Session& s) {
  auto send = [&s](json m) -> asio::awaitable<bool> {
    auto sent = co_await s.channel.send(std::move(m));
    co_return std::holds_alternative<std::monostate>(sent);
  };
  while (s.end_reason.empty()) {
    SlaveEvent event = co_await s.events.next();
    if (auto* lost = std::get_if<PeerLost>(&event)) {
      s.end_reason = lost->error.message;
      if (lost->error.closed_by_peer) s.end_reason = "master closed the connection";
      if (lost->error.closed_by_peer && !s.greeted) {
        s.end_reason = "closed the connection before the handshake ended";
      }
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
      s.end_reason = "slave shutting down";
      break;
    }
    if (const auto* evicted = std::get_if<Evicted>(&event)) {
      if (s.greeted) continue;  // greeted meanwhile: it holds no place to give up
      s.end_reason = eviction_reason(awaiting_hello_.limits(), evicted->why);
      json out = message("error", {{"message", fmt::format("slave: {}", s.end_reason)}});
      co_await send(std::move(out));
      break;
    }
    if (std::holds_alternative<ReaderExited>(event)) {
      s.reader_alive = false;
      s.end_reason = "control connection closed";
      break;
    }
    if (std::holds_alternative<Tick>(event)) {
      const auto now = Clock::now();
      s.refusals.flush_due(now);
      if (s.run && s.run->strangers) s.run->strangers->flush_due(now);
      if (!s.greeted && now - s.started > settings_.limits.hello_timeout) {
        s.end_reason = fmt::format("no greeting within {} ms (volley serve --hello-timeout)",
                                   settings_.limits.hello_timeout.count());
      } else if (s.greeted && now - s.last_heard > settings_.silence_timeout) {
        s.end_reason = fmt::format(
            "master silent for {} s",
            std::chrono::duration_cast<std::chrono::seconds>(now - s.last_heard).count());
      } else if (s.greeted) {
        co_await send(message("ping"));
      }
      continue;
    }
    if (auto* child = std::get_if<ChildMessage>(&event)) {
      if (s.children) co_await on_child(s, child->child, child->message);
      continue;
    }
    if (auto* child = std::get_if<ChildLost>(&event)) {
      if (!s.children) continue;
      s.end_reason = s.children->lost(child->child, child->error);
      json out = message("error", {{"message", fmt::format("slave: {}", s.end_reason)}});
      co_await send(std::move(out));
      break;
    }
    if (auto* done = std::get_if<LocalStepDone>(&event)) {
      if (!s.run || !s.run->engine) continue;
      s.run->done = done->step;
      if (!s.run->timed.empty() && done->step == s.run->timed.back() && s.run->cpu_before) {
        s.run->cpu = sampling::cpu_usage(*s.run->cpu_before, sampling::sample_cpu());
        s.run->nic = sampling::nic_rates(*s.run->nic_before, sampling::sample_nics());
        s.run->kernel.finish();
        s.run->rss_after = sampling::resident_bytes();
      }
      // What this side wrote in the step goes before its step_done: the master drains to it.
      bool sent = true;
      for (json& w : written_messages(done->step, s.run->engine->take_step_written(), 0)) {
        sent = sent && co_await send(std::move(w));
      }
      json out = message("step_done", {{"step", done->step}});
      // A master's child: its connects, which its parent adds up for each slave's end_step.
      if (s.run->master_side) out["connected"] = host_port_counts_to_json(s.run->engine->connected());
      // Its connects to the master: the master ends its accepts there (connected_to_master).
      out["connected_to_master"] = s.run->engine->connected_to_peer();
      if (!sent || !co_await send(std::move(out))) s.end_reason = "send failed";
      if (s.run->ended && *s.run->ended == done->step) {
        if (!co_await report_missing_connections(s, done->step)) s.end_reason = "send failed";
        start_drain(s, done->step);
      }
      continue;
    }
    if (auto* taken = std::get_if<IntervalTaken>(&event)) {
      if (!co_await send(std::move(taken->message))) s.end_reason = "send failed";
      continue;
    }
    if (auto* drained = std::get_if<LocalDrained>(&event)) {
      if (!s.run || !s.run->engine) continue;
      s.run->drained = drained->step;
      json out = drained_message(drained->step, drained->shortfalls);
      if (!co_await send(std::move(out))) s.end_reason = "send failed";
      continue;
    }
    co_await on_message(s, std::get<PeerMessage>(event).message);
  }
}

asio::awaitable<void> SlaveServer::on_message(Session& s, const json& m) {
  auto send = [&s](json out) -> asio::awaitable<bool> {
    auto sent = co_await s.channel.send(std::move(out));
    co_return std::holds_alternative<std::monostate>(sent);
  };
  // A message that does not fit the session's state is refused; the session and its run go on
  // as they were (the master decides whether to abort).
  auto refuse = [&](std::string why) -> asio::awaitable<void> {
    s.refusals.add(fmt::format("master {}: refused: {}", s.who, why));
    json out = message("error", {{"message", fmt::format("slave: {}", why)}});
    co_await send(std::move(out));
  };
  s.last_heard = Clock::now();
  const std::string type = text_field(m, "type");
  if (!s.greeted) {
    co_await greet(s, m);
    co_return;
  }
  if (type == "ping") co_return;
  if (type == "bye") {
    s.end_reason = "master said goodbye";
    co_return;
  }
  if (type == "abort") {
    s.end_reason = fmt::format("master aborted: {}", core::printable(text_field(m, "reason", "no reason given")));
    co_return;
  }
  if (type == "interval") {
    co_await on_interval(s, m);
    co_return;
  }
  if (s.children) {
    co_await on_proxied(s, type, m);
    co_return;
  }
  if (type == "load") {
    if (s.run) {
      {
        std::string why = "a profile is already loaded in this session (one load per run)";
        co_await refuse(std::move(why));
      }
      co_return;
    }
    co_await on_load(s, m);
    co_return;
  }
  LoadedRun* run = s.run.get();
  if (type == "start") {
    if (run == nullptr || run->started) {
      {
        std::string why = "'start' for a run already started";
        if (run == nullptr) why = "'start' before a profile was loaded";
        co_await refuse(std::move(why));
      }
      co_return;
    }
    const auto port = uint_field(m, "master_port");
    if (!port || *port > 65535) {
      {
        std::string why = "'start' without a valid master_port (0..65535)";
        co_await refuse(std::move(why));
      }
      co_return;
    }
    run->started = true;
    if (run->host_counters) run->kernel_series.emplace();
    if (run->master_side) {
      run->engine->set_targets(targets_from_json(m.value("targets", json::object())));
    } else {
      engine::HostTarget peer{s.master_address, static_cast<std::uint16_t>(*port), {}};
      // A child of a slave: the master's address as its parent saw it (a socketpair has none).
      if (const auto it = m.find("master_address"); it != m.end() && it->is_string()) {
        boost::system::error_code bad;
        const auto address = asio::ip::make_address(it->get<std::string>(), bad);
        if (!bad) peer.address = address;
      }
      peer.shard_ports = shard_ports_from_json(m.value("master_ports", json()));
      run->engine->set_peer(std::move(peer));
    }
    run->engine->start();
    co_return;
  }
  if (type == "proceed" || type == "end_step") {
    const auto step = uint_field(m, "step");
    if (run == nullptr || !run->started) {
      {
        std::string why = fmt::format("'{}' before the run was started", type);
        co_await refuse(std::move(why));
      }
      co_return;
    }
    if (!step || *step >= run->plan.txn_count) {
      {
        std::string why = fmt::format("'{}' without a valid step (0..{})", type, run->plan.txn_count - 1);
        co_await refuse(std::move(why));
      }
      co_return;
    }
    const auto k = static_cast<std::size_t>(*step);
    if (type == "proceed") {
      // The barrier: step k starts only after every local strand finished step k-1.
      const bool previous_done =
          k == 0 || (run->done && *run->done + 1 == k && run->drained && *run->drained + 1 == k);
      if (k != run->next_release || !previous_done) {
        {
          std::string why = fmt::format("'proceed' to step {} out of order (the next step is {}{})", k,
                                    run->next_release,
                                    previous_done ? "" : ", once the previous one is done");
          co_await refuse(std::move(why));
        }
        co_return;
      }
      if (!run->timed.empty() && k == run->timed.front()) {
        run->cpu_before = sampling::sample_cpu();
        run->nic_before = sampling::sample_nics();
        if (run->host_counters) run->kernel.start();
      }
      run->next_release = k + 1;
      run->released = k;
      run->released_at = Clock::now();
      run->engine->release(k);
      co_return;
    }
    if (run->released != k || (run->ended && *run->ended >= k)) {
      {
        std::string why = fmt::format("'end_step' for step {}, which is not the step running", k);
        co_await refuse(std::move(why));
      }
      co_return;
    }
    const auto connected = port_counts_from(m);
    if (!connected) {
      {
        std::string why = "'end_step' without a valid 'connected' list ([[port, connections], ...])";
        co_await refuse(std::move(why));
      }
      co_return;
    }
    run->ended = k;
    if (const auto ms = uint_field(m, "drain_ms")) {
      run->drain_for = std::chrono::milliseconds(std::min<std::uint64_t>(*ms, 3'600'000));
    }
    // The master's count for this process: the ports its listeners are bound to (a slave in
    // several processes relays the whole list to each).
    run->master_connected = 0;
    for (const auto& [port, n] : *connected) {
      if (run->engine->listens_on(port)) run->master_connected += n;
    }
    run->engine->end_txn(k, std::chrono::milliseconds(30), run->master_connected, run->master_written);
    // An iterations step may be over here already: then the drain starts now, else once the
    // quiescence cut has ended it.
    if (run->done && *run->done == k) {
      if (!co_await report_missing_connections(s, k)) s.end_reason = "send failed";
      start_drain(s, k);
    }
    co_return;
  }
  if (type == "written") {
    const auto step = uint_field(m, "step");
    if (run == nullptr || !run->started || !step || run->released != *step ||
        !append_written(m, run->master_written)) {
      {
        std::string why = "'written' that is malformed or not for the step running";
        co_await refuse(std::move(why));
      }
    }
    co_return;
  }
  if (type == "stop") {
    if (run == nullptr || !run->started) {
      s.end_reason = "master stopped the run before it started";
      co_return;
    }
    co_await send_results(s, RunEnd::kStopped);
    co_return;
  }
  if (type == "finish") {
    const std::size_t steps = run == nullptr ? 0 : run->plan.txn_count;
    if (run == nullptr || !run->started || (steps > 0 && (run->done != steps - 1 || run->drained != steps - 1))) {
      {
        // (no conditional operator over temporaries here: GCC 12 miscompiles it in coroutines)
        std::string why = "'finish' before the run was started";
        if (run != nullptr && run->started) {
          const std::size_t done = run->done.has_value() ? *run->done + 1 : 0;
          why = fmt::format("'finish' before the last step ({} steps, {} done)", steps, done);
        }
        co_await refuse(std::move(why));
      }
      co_return;
    }
    co_await send_results(s, RunEnd::kFinished);
    co_return;
  }
  {
    std::string why = fmt::format("unknown message type '{}'", core::printable(type));
    co_await refuse(std::move(why));
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
  if (end == RunEnd::kStopped && run.released && (!run.done || *run.done < *run.released) &&
      *run.released < result.windows.size()) {
    result.windows[*run.released].elapsed =
        std::chrono::duration_cast<std::chrono::nanoseconds>(stopped_at - run.released_at);
  }
  result.processes.push_back(process_record(run.process_name, result, run.rss_before,
                                            run.rss_after, run.cpu));
  json cpu = nullptr;
  json nic = nullptr;
  if (run.cpu) sampling::to_json(cpu, *run.cpu);
  if (run.nic) sampling::to_json(nic, *run.nic);
  json kernel = nullptr;
  if (run.kernel.deltas()) sampling::to_json(kernel, *run.kernel.deltas());
  json system = std::move(run.system);
  log_run_strangers(s);  // the listeners are closed and their last lines in
  s.run.reset();
  log(fmt::format("master {}: run {}", s.who, end == RunEnd::kFinished ? "finished" : "stopped"));
  json out = message("results", {{"result", results::to_json(result)}, {"cpu", cpu}, {"nic", nic},
                                 {"kernel", kernel}, {"system", system}});
  auto sent = co_await s.channel.send(std::move(out));
  if (!std::holds_alternative<std::monostate>(sent)) s.end_reason = "send failed";
}

namespace {
std::string admit_refusal(std::size_t sessions) {
  return fmt::format("busy with {} sessions, the most it serves at once (volley serve "
                     "--max-sessions)",
                     sessions);
}
}  // namespace

std::string SlaveServer::admit(Session& s) {
  if (greeted_ >= settings_.limits.max_sessions) return admit_refusal(greeted_);
  s.greeted = true;
  ++greeted_;
  awaiting_hello_.forget(s.id);  // a master now, no longer a stranger's place
  evict_hooks_.erase(s.id);
  return {};
}

asio::awaitable<void> SlaveServer::greet(Session& s, const json& m) {
  auto send = [&s](json out) -> asio::awaitable<bool> {
    auto sent = co_await s.channel.send(std::move(out));
    co_return std::holds_alternative<std::monostate>(sent);
  };
  std::string problem;
  if (s.challenge.empty()) {
    problem = check_hello(m, s.who);
    if (problem.empty()) {
      const AnnouncedLimits limits{settings_.limits.max_frame_bytes,
                                   settings_.limits.max_profile_bytes};
      if (settings_.key) s.challenge = random_hex(kChallengeBytes);
      if (!settings_.key) problem = admit(s);
      if (problem.empty()) {
        if (!settings_.key) {
          s.channel.set_max_frame_bytes(settings_.limits.max_frame_bytes);
          log(fmt::format("master {} connected (no key)", s.who));
        }
        if (!co_await send(slave_hello(limits, s.challenge))) s.end_reason = "send failed";
        co_return;
      }
    }
  } else {
    auto accepted = accept_master_auth(*settings_.key, s.challenge, m);
    if (auto* ok = std::get_if<AcceptedAuth>(&accepted); ok != nullptr && !admit(s).empty()) {
      accepted = std::string(admit_refusal(greeted_));
    }
    if (auto* ok = std::get_if<AcceptedAuth>(&accepted)) {
      // The master's next frame (a load, authenticated) may follow our reply at once: the
      // reader must already check its MAC and take its size when it arrives.
      s.channel.authenticate_receive(ok->keys.master_to_slave);
      s.channel.set_max_frame_bytes(settings_.limits.max_frame_bytes);
      const bool sent = co_await send(std::move(ok->reply));
      s.channel.authenticate_send(ok->keys.slave_to_master);
      s.data_mask = ok->keys.data_mask;
      log(fmt::format("master {} connected (authenticated)", s.who));
      if (!sent) s.end_reason = "send failed";
      co_return;
    }
    problem = std::get<std::string>(accepted);
  }
  // Nothing else is done for a peer that fails here: one `error`, one line in the log, closed.
  json out = message("error", {{"message", fmt::format("slave: {}", problem)}});
  co_await send(std::move(out));
  s.end_reason = problem;
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
  if (!n || s.run == nullptr || !s.run->started) {
    std::string why = "'interval' before the run was started, or without an interval number";
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
                                             std::vector<results::SlotStats> slots) {
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

asio::awaitable<void> SlaveServer::on_load(Session& s, const json& m) {
  auto reject = [&s](std::string why) -> asio::awaitable<void> {
    json out = message("rejected", {{"message", std::move(why)}});
    auto sent = co_await s.channel.send(std::move(out));
    (void)sent;
  };
  const SlaveLimits& limits = settings_.limits;
  std::string error;
  auto load = load_from_json(m, error);
  if (!load) {
    {
      std::string why = error;
      co_await reject(std::move(why));
    }
    co_return;
  }
  if (load->profile_text.size() > limits.max_profile_bytes) {
    {
      std::string why = fmt::format("slave: the profile is {} bytes; this slave accepts at most {} "
                                "(volley serve --max-profile-bytes)",
                                load->profile_text.size(), limits.max_profile_bytes);
      co_await reject(std::move(why));
    }
    co_return;
  }
  profile::Variables vars;
  vars.bindings = load->variables;
  auto parsed = profile::parse_profile(load->profile_text, load->profile_file, vars);
  if (!parsed.profile) {
    {
      std::string why = parsed.diagnostics.format(nullptr);
      co_await reject(std::move(why));
    }
    co_return;
  }
  // The master capped its durations (--max-duration); its child processes run its side from this.
  if (load->max_duration_ns > 0) {
    profile::cap_durations(*parsed.profile, std::chrono::nanoseconds(load->max_duration_ns));
  }
  auto loaded = std::make_unique<LoadedRun>();
  loaded->rss_before = sampling::resident_bytes();
  const bool child = load->shard_count > 1 || load->master_side;
  loaded->master_side = load->master_side;
  loaded->host_counters = !child;
  loaded->profile = load->master_side ? *parsed.profile : profile::mirror(*parsed.profile, load->host);
  core::Diagnostics diags;
  auto plan = engine::compile(loaded->profile, load->file_sets, diags);
  if (!plan) {
    {
      std::string why = diags.format(nullptr);
      co_await reject(std::move(why));
    }
    co_return;
  }
  loaded->plan = std::move(*plan);
  const std::size_t workers = load->workers > 0 ? load->workers : settings_.default_workers;
  if (auto problem = check_limits(loaded->plan, workers, limits); !problem.empty()) {
    s.refusals.add(fmt::format("master {}: refused the profile: {}", s.who, problem));
    {
      std::string why = fmt::format("slave: {}", problem);
      co_await reject(std::move(why));
    }
    co_return;
  }
  loaded->timed = engine::timed_steps(loaded->plan);
  if (!child) {
    const auto processes = process::process_count(loaded->profile, loaded->plan,
                                                  process::machine_budget(settings_.processes));
    if (processes > 1) {
      s.proxied_timed = loaded->timed;
      co_await load_children(s, *load, processes, workers);
      co_return;
    }
  } else {
    loaded->process_name = fmt::format("{} process {} of {}", load->master_side ? "master" : "slave",
                                       load->shard_index + 1, load->shard_count);
  }
  // Reading the snapshot runs `tc`: off the control thread, like every helper.
  loaded->system = co_await run_off_thread(context_, [] { return sampling::read_system_snapshot(); });
  engine::EngineConfig config;
  config.workers = workers;
  config.seed = load->seed;
  config.token = load->token ^ s.data_mask;
  config.peers = std::max<std::uint32_t>(1, load->peers);
  config.header_timeout = limits.header_timeout;
  loaded->strangers = std::make_shared<core::ThrottledLog>(
      [this](const std::string& line) { log(line); }, kRefusalLogInterval, "data connections closed");
  // Called on the workers' threads (their listeners): throttled and logged on this one, in this
  // run's own log even when it comes after the run is gone.
  config.on_rejected_connection = [this, strangers = loaded->strangers](const std::string& line) {
    asio::post(context_, [strangers, line] { strangers->add(line); });
  };
  config.listen_address = s.local_address;
  if (child) {
    boost::system::error_code bad;
    config.listen_address = asio::ip::make_address(load->listen_address, bad);
    if (bad) config.listen_address = asio::ip::address_v4::loopback();
  }
  config.slave_side = !load->master_side;
  config.shard_index = load->shard_index;
  config.shard_count = load->shard_count;
  config.record_latency = load->record_latency;
  config.sample_tcp = load->sample_tcp;
  config.on_txn_done = [this, &s](std::size_t step) {
    asio::post(context_, [&s, step] { s.events.push(LocalStepDone{step}); });
  };
  std::string build_error;
  try {
    loaded->engine = std::make_unique<engine::Engine>(loaded->plan, std::move(config));
  } catch (const std::exception& e) {
    // Out of memory or descriptors while building the workers: this run cannot be; the session
    // and the slave go on.
    build_error = e.what();
  }
  if (!loaded->engine) {
    log(fmt::format("master {}: cannot build the run: {}", s.who, build_error));
    {
      std::string why = fmt::format("slave: cannot build the run: {}", build_error);
      co_await reject(std::move(why));
    }
    co_return;
  }
  if (auto problem = loaded->engine->open_listeners(context_); !problem.empty()) {
    {
      std::string why = fmt::format("slave: {}", problem);
      co_await reject(std::move(why));
    }
    co_return;
  }
  json ports = json::object();
  for (const auto& [requested, actual] : loaded->engine->listener_ports()) {
    ports[std::to_string(requested)] = actual;
  }
  s.run = std::move(loaded);
  log(fmt::format("master {}: loaded profile '{}' ({} strands)", s.who,
                  core::printable(s.run->profile.name), s.run->plan.total_strands));
  json out = message("loaded", {{"ports", ports}});
  // More than one negotiated listener (a big run, or a child of a run in processes): the master
  // spreads its strands over them.
  if (const auto& listeners = s.run->engine->negotiated_ports(); listeners.size() > 1 || child) {
    out["shard_ports"] = {{"0", listeners}};
  }
  auto sent = co_await s.channel.send(std::move(out));
  if (!std::holds_alternative<std::monostate>(sent)) s.end_reason = "send failed";
}

asio::awaitable<void> SlaveServer::load_children(Session& s, const LoadRequest& load,
                                                 std::uint32_t processes, std::size_t workers) {
  auto reject = [&s](std::string why) -> asio::awaitable<void> {
    json out = message("rejected", {{"message", std::move(why)}});
    auto sent = co_await s.channel.send(std::move(out));
    (void)sent;
  };
  ChildSetSettings settings;
  settings.executable = settings_.child_executable;
  settings.shard_count = processes;
  // The run's workers, shared out: each process has its own.
  settings.workers = std::max<std::size_t>(1, (workers + processes - 1) / processes);
  auto spawned = ChildSet::spawn(context_, settings);
  if (auto* problem = std::get_if<std::string>(&spawned)) {
    {
      std::string why = fmt::format("slave: {}", *problem);
      co_await reject(std::move(why));
    }
    co_return;
  }
  s.children = std::move(std::get<std::unique_ptr<ChildSet>>(spawned));
  LoadRequest mine = load;
  mine.listen_address = s.local_address.to_string();
  mine.token = load.token ^ s.data_mask;  // the children's channel is a trusted socketpair
  if (auto problem = co_await s.children->load(std::move(mine)); !problem.empty()) {
    log(fmt::format("master {}: {}", s.who, problem));
    {
      std::string why = fmt::format("slave: {}", problem);
      co_await reject(std::move(why));
    }
    s.end_reason = problem;
    co_return;
  }
  s.children->listen(
      [&s](std::size_t i, json m) { s.events.push(ChildMessage{i, std::move(m)}); },
      [&s](std::size_t i, ChannelError e) { s.events.push(ChildLost{i, std::move(e)}); });
  // One port per process for each listener: the master sends strand s to process s % count.
  json shard_ports = {{"0", spread_ports(s.children->negotiated())}};
  json first = json::object();
  for (const auto& [requested, actual] : s.children->ports().front()) first[std::to_string(requested)] = actual;
  log(fmt::format("master {}: loaded the profile in {} processes", s.who, processes));
  json out = message("loaded", {{"ports", std::move(first)}, {"shard_ports", std::move(shard_ports)}});
  auto sent = co_await s.channel.send(std::move(out));
  if (!std::holds_alternative<std::monostate>(sent)) s.end_reason = "send failed";
}

asio::awaitable<void> SlaveServer::on_proxied(Session& s, const std::string& type, const json& m) {
  if (type == "written") {
    // Each child drains the connections of its own strands: it gets only their entries.
    std::vector<engine::ConnectionBytes> entries;
    const auto step = uint_field(m, "step");
    std::string problem = !step || !append_written(m, entries) ? "'written' that is malformed" : "";
    if (problem.empty()) problem = co_await s.children->send_written(static_cast<std::size_t>(*step), entries);
    if (!problem.empty()) {
      s.end_reason = problem;
      json out = message("error", {{"message", fmt::format("slave: {}", problem)}});
      auto sent = co_await s.channel.send(std::move(out));
      (void)sent;
    }
    co_return;
  }
  if (type != "start" && type != "proceed" && type != "end_step" && type != "finish" &&
      type != "stop") {
    json out = message("error", {{"message", fmt::format("slave: '{}' is not valid in a loaded run",
                                                         core::printable(type))}});
    auto sent = co_await s.channel.send(std::move(out));
    (void)sent;
    co_return;
  }
  // The host's kernel counters over the timed part: sampled here, once for all the children.
  if (type == "proceed" && !s.proxied_timed.empty() &&
      uint_field(m, "step") == s.proxied_timed.front()) {
    s.proxied_kernel.start();
  }
  if (type == "stop") s.proxied_kernel.finish();
  json relayed = m;
  // The children connect back to the master by the address this session sees it at.
  if (type == "start") relayed["master_address"] = s.master_address.to_string();
  if (auto problem = co_await s.children->send_all(std::move(relayed)); !problem.empty()) {
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
    json out = message("results", {{"result", to_json(merged)},
                                   {"cpu", cpu},
                                   {"nic", parts.front().value("nic", json())},
                                   {"kernel", kernel},
                                   {"system", parts.front().value("system", json())}});
    if (!co_await send(std::move(out))) s.end_reason = "send failed";
  }
}

}  // namespace volley::control
