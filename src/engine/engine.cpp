#include "volley/engine/engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "step_ledger.hpp"
#include "strand.hpp"
#include "worker.hpp"

namespace volley::engine {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {
/// How often, and for how many quiet polls, a slave waits for in-flight data before it cuts the
/// strands of a transaction the master has finished.
constexpr auto kQuiescencePoll = std::chrono::milliseconds(10);
/// How many negotiated TCP ports a data listener tries before it gives up finding one whose
/// number is free for UDP too. Each try is a port not tried before (see open_listeners): with half
/// of the range's numbers taken for UDP, 8 failures in a row happen less than once in 256 pairs,
/// so they mean a range nearly full of UDP sockets.
constexpr int kUdpPortAttempts = 8;
}  // namespace

Engine::Engine(const Plan& plan, EngineConfig config) : plan_(plan), config_(std::move(config)) {
  if (config_.io == IoEngine::kUring) {
    if (auto why = transport::Ring::unavailable(); !why.empty()) {
      throw std::runtime_error("--io uring: " + why);
    }
  }
  std::vector<results::TxnWindow> windows(plan.txn_count);
  for (std::size_t t = 0; t < plan.txn_count; ++t) {
    for (const auto& group : plan.groups) {
      if (t < group.txns.size() && std::holds_alternative<profile::Duration>(group.txns[t].bound)) {
        windows[t].is_duration = true;
      }
    }
  }
  read_exactly_.assign(plan.txn_count, 0);
  ledger_ = std::make_unique<StepLedger>(config_, std::move(windows), stopped_, [this] {
    for (auto& w : workers_) w->post_recheck_peer_end();
  });
  const std::uint32_t shards = std::max<std::uint32_t>(1, config_.shard_count);
  const auto here = [&](std::uint64_t s) { return s % shards == config_.shard_index; };
  std::uint64_t total_here = 0;
  for (const auto& group : plan.groups) {
    const std::uint64_t n =
        group.strands / shards + (config_.shard_index < group.strands % shards ? 1 : 0);
    local_strands_.push_back(n);
    total_here += n;
  }
  const std::size_t n_workers = std::max<std::size_t>(
      1, std::min<std::uint64_t>(config_.workers, std::max<std::uint64_t>(total_here, 1)));
  for (std::size_t i = 0; i < n_workers; ++i) {
    workers_.push_back(std::make_unique<Worker>(*this, *ledger_));
  }
  // Round-robin over the strands of each group, so each group spreads over all workers. The rule
  // is the one the peer's connects follow (negotiated_ports()): strand s of group 0 is on worker
  // (s / shards) % workers, whose own listener the peer's port_for(s) picks, so its connections
  // are accepted on the worker that runs it. Later groups start one worker further on (two
  // one-strand groups must not share a worker); their connections may land on another worker
  // and are handed over (route()).
  placement_.resize(plan.groups.size());
  for (std::size_t g = 0; g < plan.groups.size(); ++g) {
    placement_[g].reserve(plan.groups[g].strands);
    for (std::uint64_t s = 0; s < plan.groups[g].strands; ++s) {
      if (!here(s)) {
        placement_[g].emplace_back(kNotHere, 0);
        continue;
      }
      const auto w = static_cast<std::uint32_t>((s / shards + g) % workers_.size());
      placement_[g].emplace_back(w, workers_[w]->add_strand(g, s));
    }
  }
  for (const auto& w : workers_) active_workers_ += w->strand_count() > 0 ? 1U : 0U;
}

Engine::~Engine() {
  if (started_ && !finished_) {
    stop();
    finish();
  }
  *alive_ = false;
}

std::string Engine::open_listeners(asio::io_context& control) {
  control_ = &control;
  // Connections this engine's strands accept, at most, on negotiated ports: one listener per
  // accept queue's worth (see negotiated_ports()).
  std::uint64_t accepts = 0;
  for (std::size_t g = 0; g < plan_.groups.size(); ++g) {
    std::uint64_t per_strand = 0;
    for (const auto& txn : plan_.groups[g].txns) {
      for (const auto& op : txn.ops) {
        const auto* accept = std::get_if<profile::AcceptOp>(&op.spec);
        if (accept != nullptr && !accept->connection.port) ++per_strand;
      }
    }
    accepts += per_strand * local_strands_[g];
  }
  // A quarter of the queue each: the accept loop lags behind a storm of connects on a loaded
  // machine, and a queue that fills drops handshakes. Every worker has its own listener, hence its
  // own queue, on each negotiated port copy.
  const std::uint64_t backlog = std::max<std::uint64_t>(1, transport::accept_backlog() / 4);
  const std::uint64_t n_workers = workers_.size();
  const std::uint64_t queues = (accepts + backlog - 1) / backlog;
  const std::uint64_t copies =
      std::clamp<std::uint64_t>((queues + n_workers - 1) / n_workers, 1, 64);
  // TCP listeners whose number was taken for UDP: kept open until every listener is open, so that
  // the kernel picks a new port each time (also for the next worker's and copy's listeners).
  std::vector<std::unique_ptr<transport::DataListener>> passed_over;
  const auto fail = [this](std::string error) {
    listeners_.clear();
    udp_listeners_.clear();
    listener_ports_.clear();
    tcp_ports_.clear();
    negotiated_ports_.clear();
    return error;
  };
  for (const std::uint16_t port : plan_.accept_ports) {
    std::optional<std::uint64_t> window;
    bool udp = false;
    for (const auto& group : plan_.groups) {
      for (const auto& txn : group.txns) {
        for (const auto& op : txn.ops) {
          const auto* accept = std::get_if<profile::AcceptOp>(&op.spec);
          if (accept == nullptr || accept->connection.port.value_or(0) != port) continue;
          udp = udp || accept->connection.protocol == profile::Protocol::kUdp;
          if (accept->connection.window_bytes) {
            window = std::max(window.value_or(0), *accept->connection.window_bytes);
          }
        }
      }
    }
    // A negotiated port: one port per worker and copy, listed worker by worker within a copy, so
    // that the peer's port_for(s) (list index s % size) names strand s's worker. A port the
    // profile names: every worker listens on it, sharing it (SO_REUSEPORT).
    for (std::uint64_t copy = 0; copy < (port == 0 ? copies : 1); ++copy) {
      for (std::uint32_t w = 0; w < n_workers; ++w) {
        // UDP connections say hello on the same port number: the peer knows only that one. A
        // negotiated TCP port is the kernel's pick, and its number may already be some other
        // socket's UDP port (e.g. another run's ephemeral one); then the pair is picked again.
        const bool with_udp = udp && (port == 0 || w == 0);
        std::unique_ptr<transport::DataListener> listener;
        std::unique_ptr<transport::UdpListener> udp_listener;
        for (int attempt = 1;; ++attempt) {
          if (listener) passed_over.push_back(std::move(listener));
          listener = std::make_unique<transport::DataListener>(
              workers_[w]->context(), config_.tokens(),
              [this, w](const transport::ConnectionHeader& header, asio::ip::tcp::socket socket) {
                route(w, header, std::move(socket));
              },
              config_.header_timeout, config_.on_rejected_connection);
          if (auto error = listener->open(config_.listen_address, port, window, port != 0);
              !error.empty()) {
            return fail(error);
          }
          if (!with_udp) break;
          udp_listener = std::make_unique<transport::UdpListener>(
              control, config_.tokens(),
              [this](const transport::ConnectionHeader& header, asio::ip::udp::socket socket) {
                route_udp(header, std::move(socket));
              });
          auto error = udp_listener->open(config_.listen_address, listener->port(), window);
          if (error.empty()) break;
          // A port the profile names is the user's to free; it is not ours to pick another.
          if (port != 0) return fail(error);
          if (attempt == kUdpPortAttempts) {
            return fail(fmt::format(
                "{} ({} negotiated ports in a row had their number taken for UDP by other "
                "sockets: too few free ephemeral ports; widen net.ipv4.ip_local_port_range or "
                "start fewer UDP runs at once)",
                error, kUdpPortAttempts));
          }
        }
        if (copy == 0 && w == 0) listener_ports_[port] = listener->port();
        tcp_ports_.insert(listener->port());
        if (port == 0) negotiated_ports_.push_back(listener->port());
        listeners_.push_back({w, std::move(listener)});
        if (udp_listener) udp_listeners_.push_back(std::move(udp_listener));
      }
    }
  }
  return {};
}

void Engine::close_listeners() {
  // Each listener belongs to its worker's thread; once the workers are joined (or not started)
  // nothing else runs there.
  for (auto& [w, listener] : listeners_) {
    asio::post(workers_[w]->context(), [l = listener.get()] { l->close(); });
  }
  for (auto& listener : udp_listeners_) listener->close();
}

std::map<std::uint16_t, std::uint16_t> Engine::listener_ports() const { return listener_ports_; }

void Engine::start() {
  started_ = true;
  for (auto& [w, listener] : listeners_) listener->start();
  for (auto& listener : udp_listeners_) listener->start();
  for (auto& w : workers_) w->start();
}

void Engine::release(std::size_t txn) {
  if (stopped_ || txn >= plan_.txn_count) return;
  const auto now = Clock::now();
  ledger_->released(txn, now, active_workers_);
  if (active_workers_ == 0) {
    if (config_.on_txn_done) config_.on_txn_done(txn);
    return;
  }
  for (auto& w : workers_) {
    if (w->strand_count() > 0) w->post_release(txn, now);
  }
}

void Engine::end_txn(std::size_t txn, std::chrono::milliseconds quiet_for,
                     std::optional<std::uint64_t> peer_connected,
                     std::optional<std::vector<ConnectionBytes>> peer_written) {
  peer_connected_ = peer_connected;
  if (peer_written && !stopped_) {
    ledger_->set_peer_connected(peer_connected.value_or(0));
    std::vector<std::vector<std::pair<std::uint32_t, ConnectionBytes>>> per_worker(workers_.size());
    for (const ConnectionBytes& e : *peer_written) {
      if (e.group >= placement_.size() || e.strand >= placement_[e.group].size()) continue;
      const auto [worker, local] = placement_[e.group][e.strand];
      if (worker != kNotHere) per_worker[worker].emplace_back(local, e);
    }
    for (std::size_t w = 0; w < workers_.size(); ++w) {
      if (workers_[w]->strand_count() > 0)
        workers_[w]->post_peer_ended(txn, std::move(per_worker[w]));
    }
  }
  ledger_->ended(txn);
  if (control_ == nullptr || stopped_) {
    for (auto& w : workers_) w->post_cut(txn, CutReason::kEnded);
    return;
  }
  if (!quiesce_timer_) quiesce_timer_ = std::make_unique<asio::steady_timer>(*control_);
  // The previous step's poll may still be running (it stops only after quiet polls, and the next
  // step keeps it busy). It is superseded: its step ended on this side before the master went on.
  ++quiesce_generation_;
  starved_polls_ = 0;
  const auto polls = std::max<std::int64_t>(1, quiet_for / kQuiescencePoll);
  arm_quiescence(txn, progress(), 0, static_cast<int>(std::min<std::int64_t>(polls, 1'000'000)));
}

void Engine::arm_quiescence(std::size_t txn, std::uint64_t last_progress, int quiet_polls,
                            int polls_needed) {
  quiesce_timer_->expires_after(kQuiescencePoll);
  // A poll whose timer had already fired may still be queued when the engine goes away: `alive`
  // says whether `this` may be touched. Likewise when end_txn() re-arms the timer for a newer
  // step: re-arming cannot cancel a handler already queued, so the handler checks its generation;
  // a stale one that went on would re-arm the timer for its own step (cancelling the newer
  // step's poll) and then cut a step that is over, leaving the newer one uncut forever.
  quiesce_timer_->async_wait([this, alive = alive_, txn, last_progress, quiet_polls, polls_needed,
                              generation =
                                  quiesce_generation_](const boost::system::error_code& ec) {
    if (ec || !*alive || stopped_ || generation != quiesce_generation_) return;
    const std::uint64_t now = progress();
    // A thinking strand is not waiting for the master: it will go on by itself.
    // Connections still in an accept queue are on their way to strands: not quiet (with tens of
    // thousands of connects, a loaded machine can leave the accept loop idle for 30 ms).
    const bool queued = std::any_of(listeners_.begin(), listeners_.end(),
                                    [](const auto& l) { return l.listener->queued() > 0; });
    // A worker thread that is runnable yet made no progress is waiting for a CPU, not for the
    // master: on a loaded machine, with thousands of strands, one can wait longer than the quiet
    // spell, and cutting its strands then ended them with operations unanswered (uperf's
    // canfail.xml, a 10,000-connection storm, once in a full test run). At most starved_grace
    // of such polls a step, so that a worker that runs without counting progress cannot hold the
    // step open.
    bool starved = false;
    if (now == last_progress && starved_polls_ < config_.starved_grace / kQuiescencePoll) {
      starved = std::any_of(workers_.begin(), workers_.end(),
                            [](const auto& w) { return w->runnable(); });
      if (starved) ++starved_polls_;
    }
    // A poll that found a worker waiting for a CPU tells nothing either way: it neither counts
    // towards the spell nor restarts it. Restarting it let a worker that runs a handler now and
    // then (the interval's counters, each second; slow under a sanitizer) keep the long spell
    // (kAcceptQuiet) from ever ending within the master's step grace.
    int quiet = 0;
    if (now == last_progress && !thinking() && !queued)
      quiet = starved ? quiet_polls : quiet_polls + 1;
    // Knowing how many connections the peer established, the long spell is needed only while
    // some are missing; not knowing, whenever a strand still waits for one.
    const bool long_spell = peer_connected_
                                ? accepted_connections() < *peer_connected_
                                : std::any_of(workers_.begin(), workers_.end(),
                                              [](const auto& w) { return w->accepting(); });
    const int needed =
        long_spell ? std::max<int>(polls_needed, static_cast<int>(kAcceptQuiet / kQuiescencePoll))
                   : polls_needed;
    if (quiet < needed) {
      arm_quiescence(txn, now, quiet, polls_needed);
      return;
    }
    if (long_spell && needed > polls_needed) ++long_accept_waits_;
    quiet_cut_ = txn;
    ledger_->quiet_cut(txn);
    quiet_cut_only_accepts_ = peer_connected_ && accepted_connections() >= *peer_connected_ &&
                              std::all_of(workers_.begin(), workers_.end(),
                                          [](const auto& w) { return w->only_accepting(); });
    for (auto& w : workers_) w->post_cut(txn, CutReason::kEnded);
    ledger_->end_awaited_step();  // connections still missing are given up on: the check says so
  });
}

std::map<std::pair<std::string, std::uint16_t>, std::uint64_t> Engine::connected() const {
  return ledger_->connected();
}

std::uint64_t Engine::connected_to_peer() const { return ledger_->connected_to_peer(); }

std::vector<ConnectionBytes> Engine::take_step_written() { return ledger_->take_step_written(); }

void Engine::stop() {
  if (stopped_.exchange(true)) return;
  if (quiesce_timer_) quiesce_timer_->cancel();
  close_listeners();
  for (auto& w : workers_) w->post_stop();
}

std::uint64_t Engine::progress() const {
  // Connections the listeners routed count too: while thousands of connects wait in the accept
  // backlog, the strands that will accept them make no progress of their own.
  std::uint64_t sum = routed_.load(std::memory_order_relaxed);
  for (const auto& w : workers_) sum += w->progress();
  return sum;
}

bool Engine::thinking() const {
  return std::any_of(workers_.begin(), workers_.end(), [](const auto& w) { return w->thinking(); });
}

void Engine::take_interval(asio::io_context& reply_on,
                           std::function<void(std::vector<results::SlotStats>)> done) {
  // Each worker swaps its interval counters out when it next runs a handler (within one yield
  // budget) and posts them back here; the last part to arrive completes the sum. The control
  // thread never waits for a worker.
  struct Gather {
    std::vector<results::SlotStats> sum;
    std::size_t pending = 0;
    std::function<void(std::vector<results::SlotStats>)> done;
  };
  auto gather = std::make_shared<Gather>();
  gather->sum.resize(plan_.slots.size());
  gather->pending = workers_.size();
  gather->done = std::move(done);
  for (auto& w : workers_) {
    w->post_take_interval(
        [&reply_on, gather, alive = alive_](std::vector<results::SlotStats> part) {
          asio::post(reply_on, [gather, alive, part = std::move(part)]() mutable {
            if (!*alive) return;
            for (std::size_t i = 0; i < part.size(); ++i) gather->sum[i].merge(part[i]);
            if (--gather->pending == 0) gather->done(std::move(gather->sum));
          });
        });
  }
}

void Engine::route(std::uint32_t accepted_on, const transport::ConnectionHeader& header,
                   asio::ip::tcp::socket socket) {
  if (header.group >= placement_.size() || header.strand >= placement_[header.group].size()) {
    return;  // not a strand of this run: the socket closes here
  }
  const auto [worker, local] = placement_[header.group][header.strand];
  if (worker == kNotHere) return;  // another process's strand: it connected to the wrong port
  const std::uint32_t peer = config_.tokens().peer_of(header.token).value_or(0);
  routed_.fetch_add(1, std::memory_order_relaxed);
  accepted_tcp_.fetch_add(1, std::memory_order_relaxed);
  if (worker == accepted_on) {  // the usual case: straight to the strand, on this thread
    workers_[worker]->deliver(local, header.conn, peer,
                              transport::TcpConnection(std::move(socket)));
    return;
  }
  // Accepted on another worker (a port the profile names, shared by all workers): the descriptor
  // moves to the strand's worker, whose reactor registers it.
  handed_over_.fetch_add(1, std::memory_order_relaxed);
  boost::system::error_code ec;
  const auto protocol = socket.local_endpoint(ec).protocol();
  if (ec) return;
  const int fd = socket.release(ec);
  if (ec) return;
  workers_[worker]->post_deliver(local, header.conn, peer, protocol, fd);
}

void Engine::route_udp(const transport::ConnectionHeader& header, asio::ip::udp::socket socket) {
  if (header.group >= placement_.size() || header.strand >= placement_[header.group].size()) {
    return;
  }
  const auto [worker, local] = placement_[header.group][header.strand];
  const std::uint32_t peer = config_.tokens().peer_of(header.token).value_or(0);
  routed_.fetch_add(1, std::memory_order_relaxed);
  boost::system::error_code ec;
  const auto protocol = socket.local_endpoint(ec).protocol();
  if (ec) return;
  const int fd = socket.release(ec);
  if (ec) return;
  workers_[worker]->post_deliver_udp(local, header.conn, peer, protocol, fd);
}

std::vector<results::StrandCounts> Engine::strand_counts(std::size_t g) const {
  std::vector<results::StrandCounts> out;
  if (!config_.count_strands) return out;
  out.reserve(placement_[g].size());
  for (const auto& [worker, local] : placement_[g]) {
    out.push_back(worker == kNotHere ? results::StrandCounts{}
                                     : workers_[worker]->strand_counts(local));
  }
  return out;
}

results::RunResult Engine::finish() {
  if (finished_) return {};
  finished_ = true;
  close_listeners();  // before the join: a listener's pending accept keeps its worker running
  for (auto& w : workers_) w->join();
  std::vector<results::SlotStats> totals(plan_.slots.size());
  results::RunResult result;
  for (auto& w : workers_) {
    auto part = w->take_totals();
    for (std::size_t i = 0; i < part.size(); ++i) totals[i].merge(part[i]);
    result.connections_requested += w->connections_requested();
    result.connections_established += w->connections_established();
    result.failed_strands += w->failed_strands();
    for (auto& e : w->error_samples()) result.error_samples.push_back(std::move(e));
  }
  for (std::size_t g = 0; g < plan_.groups.size(); ++g) {
    const GroupPlan& gp = plan_.groups[g];
    results::GroupResult gr{group_display_name(gp, g), local_strands_[g], {}, strand_counts(g)};
    for (std::size_t t = 0; t < gp.txns.size(); ++t) {
      const TxnPlan& tp = gp.txns[t];
      results::TxnResult tr{txn_display_name(tp, t), std::move(totals[tp.slot]), {}, {}};
      if (tp.uncorrected_slot)
        tr.uncorrected_latency = std::move(totals[*tp.uncorrected_slot].latency);
      for (const auto& op : tp.ops) {
        results::FlowopResult f{op.type, std::move(totals[op.slot]), {}};
        if (op.handshakes) {
          f.handshakes = results::HandshakeResult{std::move(totals[op.handshakes->full]),
                                                  std::move(totals[op.handshakes->resumed])};
        }
        tr.flowops.push_back(std::move(f));
      }
      gr.transactions.push_back(std::move(tr));
    }
    result.groups.push_back(std::move(gr));
  }
  result.windows = ledger_->windows();
  for (std::size_t t = 0; t < result.windows.size() && t < read_exactly_.size(); ++t) {
    result.windows[t].connections_read_exactly = read_exactly_[t];
  }
  listeners_.clear();
  udp_listeners_.clear();
  return result;
}

}  // namespace volley::engine
