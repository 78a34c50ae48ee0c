#include "worker.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <string>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "step_ledger.hpp"
#include "strand.hpp"

namespace volley::engine {

namespace asio = boost::asio;

namespace {
constexpr std::size_t kMaxErrorSamples = 20;
constexpr std::size_t kReleasedAll = std::numeric_limits<std::size_t>::max();
}  // namespace

Worker::Worker(Engine& engine, StepLedger& ledger)
    : engine_(engine),
      ledger_(ledger),
      interval_(engine.plan().slots.size()),
      counts_strands_(engine.config().count_strands),
      totals_(engine.plan().slots.size()),
      buffer_(engine.plan().io_buffer_bytes, 'v'),
      release_timer_(context_),
      cut_timer_(context_) {
  // Strands wait on this timer as on a condition variable: on_release() cancels it to wake them
  // all. Its expiry is set here and after each wake only, never by a waiter (that would cancel
  // the other waiters).
  release_timer_.expires_at(Clock::time_point::max());
}

Worker::~Worker() { join(); }

std::uint32_t Worker::add_strand(std::size_t group, std::uint64_t strand) {
  strands_.push_back(std::make_unique<Strand>(*this, group, strand));
  return static_cast<std::uint32_t>(strands_.size() - 1);
}

void Worker::start() {
  guard_.emplace(context_.get_executor());
  for (auto& strand : strands_) {
    asio::co_spawn(context_, strand->run(), [this](const std::exception_ptr& e) {
      if (!e) return;
      // Executors return errors as values; an exception here is a bug, reported, not hidden.
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        note_error("engine", std::string("internal error: ") + ex.what());
      }
    });
  }
  thread_ = std::thread([this] {
    tid_.store(static_cast<int>(::gettid()), std::memory_order_relaxed);
    if (engine_.config().io == IoEngine::kUring) open_ring();
    context_.run();
    if (ring_) {
      // The ring has one issuer, this thread: its connections close through it here, and what
      // is still in flight is cancelled and collected before the thread goes.
      for (auto& strand : strands_) strand->close_all();
      ring_->shutdown();
    }
  });
}

void Worker::open_ring() {
  auto opened = transport::Ring::open(context_);
  if (auto* ring = std::get_if<std::unique_ptr<transport::Ring>>(&opened)) {
    ring_ = std::move(*ring);
    return;
  }
  // The engine checked that a ring can be set up before it started (Engine::Engine): a worker
  // that still cannot have one fails its strands rather than run them on the other engine.
  note_error("io_uring", std::get<std::string>(opened), true);
  stopping_ = true;
  for (auto& strand : strands_) strand->stop();
}

bool Worker::runnable() const {
  const int tid = tid_.load(std::memory_order_relaxed);
  if (tid == 0) return false;
  // The state is the first field after the command name, which is in parentheses and may itself
  // hold spaces and parentheses: read from the last ')'.
  std::ifstream stat(fmt::format("/proc/self/task/{}/stat", tid));
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'R';
}

void Worker::join() {
  guard_.reset();
  if (!thread_.joinable()) return;
  thread_.join();
  for (auto& strand : strands_) strand->close_all();  // the thread is gone: no race
}

void Worker::post_release(std::size_t txn, Clock::time_point start) {
  asio::post(context_, [this, txn, start] { on_release(txn, start); });
}

void Worker::post_cut(std::size_t txn, CutReason reason) {
  asio::post(context_, [this, txn, reason] { cut(txn, reason); });
}

void Worker::post_peer_ended(std::size_t txn,
                             std::vector<std::pair<std::uint32_t, ConnectionBytes>> peer_written) {
  asio::post(context_, [this, txn, peer_written = std::move(peer_written)] {
    std::vector<std::vector<ConnectionBytes>> per_strand(strands_.size());
    for (const auto& [local, e] : peer_written) {
      if (local < per_strand.size()) per_strand[local].push_back(e);
    }
    for (std::size_t i = 0; i < strands_.size(); ++i) {
      strands_[i]->peer_ended(txn, std::move(per_strand[i]));
    }
  });
}

void Worker::post_recheck_peer_end() {
  asio::post(context_, [this] {
    for (auto& strand : strands_) strand->recheck_peer_end();
  });
}

void Worker::post_stop() {
  asio::post(context_, [this] {
    stopping_ = true;
    released_ = kReleasedAll;
    release_timer_.cancel();
    cut_timer_.cancel();
    for (auto& strand : strands_) strand->stop();
  });
}

void Worker::deliver(std::uint32_t local, std::uint32_t conn, std::uint32_t peer,
                     AnyConnection link) {
  strands_[local]->deliver(conn, peer, std::move(link));
  ledger_.tcp_delivered();
}

void Worker::post_deliver(std::uint32_t local, std::uint32_t conn, std::uint32_t peer,
                          asio::ip::tcp protocol, int fd) {
  asio::post(context_, [this, local, conn, peer, protocol, fd] {
    boost::system::error_code ec;
    asio::ip::tcp::socket socket(context_);
    socket.assign(protocol, fd, ec);
    if (ec) {
      ::close(fd);
      return;
    }
    strands_[local]->deliver(conn, peer, transport::TcpConnection(std::move(socket)));
    ledger_.tcp_delivered();
  });
}

void Worker::post_deliver_udp(std::uint32_t local, std::uint32_t conn, std::uint32_t peer,
                              asio::ip::udp protocol, int fd) {
  asio::post(context_, [this, local, conn, peer, protocol, fd] {
    boost::system::error_code ec;
    asio::ip::udp::socket socket(context_);
    socket.assign(protocol, fd, ec);
    if (!ec) socket.non_blocking(true, ec);
    if (ec) {
      ::close(fd);
      return;
    }
    transport::UdpConnection link(std::move(socket));
    link.leave_reactor();  // should it fail, the socket stays in the reactor: slower, still right
    strands_[local]->deliver(conn, peer, std::move(link));
  });
}

void Worker::post_take_interval(std::function<void(std::vector<results::SlotStats>)> deliver) {
  auto take = [this, deliver = std::move(deliver)] {
    std::vector<results::SlotStats> taken = std::move(interval_);
    interval_ = std::vector<results::SlotStats>(taken.size());
    for (std::size_t i = 0; i < taken.size(); ++i) totals_[i].merge(taken[i]);
    // The interval's TCP figures are each connection read once: as its transaction ended within
    // the interval (those readings are the totals' too), or as the interval ends for the strands
    // still inside a transaction (never added to the totals: a connection's counts run from its
    // opening, so the totals take each connection at its transaction's end only).
    for (const auto& strand : strands_) strand->sample_tcp_now(taken);
    deliver(std::move(taken));
  };
  if (!thread_.joinable()) {
    take();  // not started, or joined: nothing else touches the counters
    return;
  }
  asio::post(context_, std::move(take));
}

void Worker::fold_interval() {
  for (std::size_t i = 0; i < interval_.size(); ++i) {
    totals_[i].merge(interval_[i]);
    interval_[i].reset();
  }
}

const results::StrandCounts& Worker::strand_counts(std::uint32_t local) const {
  return strands_.at(local)->own_counts();
}

std::vector<results::SlotStats> Worker::take_totals() {
  fold_interval();
  return std::move(totals_);
}

std::span<const char> Worker::zero_copy_buffer() {
  if (!zero_copy_buffer_) zero_copy_buffer_ = std::make_unique<ZeroCopyBuffer>(buffer_.size());
  return zero_copy_buffer_->bytes();
}

asio::awaitable<void> Worker::yield() {
  inline_work_ = 0;
  return asio::post(context_.get_executor(), asio::use_awaitable);  // no coroutine frame of its own
}

asio::awaitable<void> Worker::wait_release(std::size_t txn) {
  while (released_ <= txn) {
    inline_work_ = 0;
    co_await release_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

void Worker::on_release(std::size_t txn, Clock::time_point start) {
  if (stopping_) return;
  released_ = txn + 1;
  done_in_txn_ = 0;
  unfinished_.store(strands_.size(), std::memory_order_relaxed);
  txn_start_ = start;
  release_timer_.cancel();
  release_timer_.expires_at(Clock::time_point::max());
  arm_cut_timer(txn);
}

void Worker::arm_cut_timer(std::size_t txn) {
  const EngineConfig& config = engine_.config();
  if (config.slave_side) return;  // the master decides when a slave's transaction ends
  std::optional<std::chrono::nanoseconds> longest;
  for (const auto& group : engine_.plan().groups) {
    if (txn >= group.txns.size()) continue;
    if (const auto* d = std::get_if<profile::Duration>(&group.txns[txn].bound)) {
      longest = std::max(longest.value_or(d->length), d->length);
    }
  }
  if (!longest) return;
  // Operations still in flight at the deadline get a short grace to finish, so that both ends
  // count the same bytes; whatever still waits after it is cut and counted as expired. While
  // operations keep completing (tens of thousands of connections each waiting for its answer)
  // the grace is renewed, up to drain_limit.
  arm_drain(txn, txn_start_ + *longest + config.drain_grace,
            txn_start_ + *longest + config.drain_limit, progress_local_);
}

void Worker::arm_drain(std::size_t txn, Clock::time_point at, Clock::time_point limit,
                       std::uint64_t progress_at_arm) {
  cut_timer_.expires_at(at);
  cut_timer_.async_wait([this, txn, limit, progress_at_arm](const boost::system::error_code& ec) {
    if (ec) return;
    const auto next = Clock::now() + engine_.config().drain_grace;
    if (progress_local_ != progress_at_arm && next <= limit) {
      arm_drain(txn, next, limit, progress_local_);
      return;
    }
    cut(txn, CutReason::kEnded);
  });
}

void Worker::cut(std::size_t txn, CutReason reason) {
  for (auto& strand : strands_) strand->cut(txn, reason);
}

void Worker::strand_done(std::size_t txn) {
  unfinished_.fetch_sub(1, std::memory_order_relaxed);
  if (++done_in_txn_ < strands_.size() || stopping_) return;
  cut_timer_.cancel();
  ledger_.add_step_written(std::move(step_written_));
  step_written_.clear();
  // Kept, zeroed, rather than cleared: the next step's connects find their keys without allocating.
  if (!step_connected_.empty()) {
    ledger_.add_step_connected(step_connected_);
    for (auto& entry : step_connected_) entry.second = 0;
  }
  ledger_.worker_finished_txn(txn);
}

void Worker::count_connection(bool established) {
  if (established) {
    ++connections_established_;
  } else {
    ++connections_requested_;
  }
}

void Worker::note_error(std::string where, std::string message, bool stopped) {
  const bool first_stop =
      stopped && std::none_of(error_samples_.begin(), error_samples_.end(),
                              [](const results::ErrorSample& e) { return e.stopped; });
  if (error_samples_.size() < kMaxErrorSamples || first_stop) {
    error_samples_.push_back(results::ErrorSample{std::move(where), std::move(message), stopped});
  }
}

std::uint64_t Worker::failed_strands() const {
  std::uint64_t n = 0;
  for (const auto& s : strands_) n += s->failed() ? 1U : 0U;
  return n;
}

}  // namespace volley::engine
