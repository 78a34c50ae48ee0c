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
using Clock = SlaveClock;

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
/// Why a connection still owing its hello was closed for a newcomer.
std::string eviction_reason(const transport::SourceQuota::Limits& limits,
                            transport::SourceQuota::Verdict why) {
  if (why == transport::SourceQuota::Verdict::kReplacesOwnOldest) {
    return fmt::format(
        "no hello yet, closed to make room for a newer connection from its "
        "address, which held {}, the most one address may (volley serve "
        "--hello-timeout)",
        limits.per_source);
  }
  return fmt::format(
      "no hello yet, closed to make room: {} connections waited for their hello, "
      "the most this slave holds, and its address held the most of them (volley "
      "serve --hello-timeout)",
      limits.total);
}

bool out_of_descriptors(const boost::system::error_code& ec) {
  return ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
         ec == boost::system::errc::too_many_files_open_in_system || ec == asio::error::no_memory;
}

}  // namespace

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
  asio::co_spawn(context_, serve(std::move(socket), next_session_++),
                 [this](const std::exception_ptr& e) {
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
  log(
      fmt::format("master {}: {} data connection{} closed without a valid header in this run "
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
    asio::co_spawn(context_, serve(std::move(socket), id), [this](const std::exception_ptr& e) {
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
          s.events.push(
              PeerLost{ChannelError{fmt::format("reading from {}: {}", s.who, e.what())}});
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
  if (s.greeted()) {
    log(fmt::format("master {} gone ({}); idle", s.who, s.end_reason));
  } else {
    log_refused_peer(fmt::format("refused {}: {}", s.who, s.end_reason));
  }
  if (s.greeted()) --greeted_;
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
      if (lost->error.closed_by_peer && !s.greeted()) {
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
      if (s.greeted()) continue;  // greeted meanwhile: it holds no place to give up
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
      if (!s.greeted() && now - s.started > settings_.limits.hello_timeout) {
        s.end_reason = fmt::format("no greeting within {} ms (volley serve --hello-timeout)",
                                   settings_.limits.hello_timeout.count());
      } else if (s.greeted() && now - s.last_heard > settings_.silence_timeout) {
        s.end_reason = fmt::format(
            "master silent for {} s",
            std::chrono::duration_cast<std::chrono::seconds>(now - s.last_heard).count());
      } else if (s.greeted()) {
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
      s.run->barrier.done(done->step);
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
      if (s.run->master_side)
        out["connected"] = host_port_counts_to_json(s.run->engine->connected());
      // Its connects to the master: the master ends its accepts there (connected_to_master).
      out["connected_to_master"] = s.run->engine->connected_to_peer();
      if (!sent || !co_await send(std::move(out))) s.end_reason = "send failed";
      if (s.run->barrier.drain_due(done->step)) {
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
      s.run->barrier.drained(drained->step);
      json out = drained_message(drained->step, drained->shortfalls);
      if (!co_await send(std::move(out))) s.end_reason = "send failed";
      continue;
    }
    co_await on_message(s, std::get<PeerMessage>(event).message);
  }
}

namespace {
std::string admit_refusal(std::size_t sessions) {
  return fmt::format(
      "busy with {} sessions, the most it serves at once (volley serve "
      "--max-sessions)",
      sessions);
}
}  // namespace

std::string SlaveServer::admit(Session& s) {
  if (greeted_ >= settings_.limits.max_sessions) return admit_refusal(greeted_);
  s.phase = ServedPhase::kIdle;
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

}  // namespace volley::control
