#include "strand.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>

#include "source_address.hpp"
#include "volley/engine/error_kind.hpp"
#include "volley/profile/flowop_traits.hpp"
#include "volley/transport/closed_at_header.hpp"
#include "volley/transport/connection_header.hpp"
#include "volley/transport/socket_options.hpp"
#include "volley/transport/tcp_info.hpp"

namespace volley::engine {

namespace asio = boost::asio;
using asio::awaitable;
using boost::system::error_code;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

/// How long a busy think spins before it lets the rest of its worker run (and sees a cut).
constexpr auto kSpinSlice = std::chrono::microseconds(50);

/// The most a stream read asks for at once, whatever its flowop's size, when its peer writes
/// from memory. Its peer's copy into the socket is then the bottleneck, and small reads drain
/// the receive queue sooner, which on loopback cut the *sender's* kernel time per byte (its send
/// runs the receiving socket's input): one 64 KiB stream reached 1.46 of stream_ref's throughput
/// with 16 KiB asks, against 0.44-0.52 with 256 KiB or 64 KiB asks (docs/performance.md,
/// bench/bulk_vs_stream_ref.sh). A ping-pong's messages are smaller, so nothing changes there.
constexpr std::size_t kStreamReadAsk = 16 * 1024;
/// The same when the peer sends with sendfile (the slave's recvfile, the mirror of a sendfile):
/// the sender copies nothing, the reader is the bottleneck, and fewer, larger reads cost it less
/// (sendfile: 0.49 of stream_ref -f with 16 KiB asks, 0.93 with 256 KiB).
constexpr std::size_t kZeroCopyPeerReadAsk = 256 * 1024;

/// A stream read that must wait for at least this many bytes asks the kernel to wake it only when
/// they are there (or kMaxWakeAfter of them), not at each arrival: see Strand::expect. Below it
/// (a ping-pong's messages) the mark stays at 1 and costs no system call.
constexpr std::uint64_t kWakeFrom = 16 * 1024;

/// What a stream read for flowop `op` asks for: see kStreamReadAsk.
std::span<char> stream_ask(std::span<char> buffer, const OpPlan& op) {
  const bool zero_copy_peer = std::holds_alternative<profile::RecvFileOp>(op.spec);
  return buffer.first(std::min(buffer.size(), zero_copy_peer ? kZeroCopyPeerReadAsk
                                                             : kStreamReadAsk));
}

std::uint64_t elapsed_ns(std::chrono::steady_clock::time_point from,
                         std::chrono::steady_clock::time_point to) {
  const auto d = std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count();
  return d > 0 ? static_cast<std::uint64_t>(d) : 0;
}

bool opens_connection(const OpPlan& op) {
  return profile::opens(profile::traits(op.spec).connection);
}

/// The connection's own call, whatever its protocol: a jump through the variant's index.
template <class F>
decltype(auto) on(transport::AnyConnection& link, F&& f) {
  return std::visit(std::forward<F>(f), link);
}

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace

Strand::Strand(Worker& worker, std::size_t group, std::uint64_t index)
    : worker_(worker),
      group_(group),
      index_(index),
      timer_(worker.context()) {}

awaitable<void> Strand::run() {
  const Plan& plan = worker_.plan();
  const GroupPlan& group = plan.groups[group_];
  for (std::size_t t = 0; t < plan.txn_count; ++t) {
    co_await worker_.wait_release(t);
    txn_ = t;
    begin_step();
    if (!failed_ && !worker_.stopping() && t < group.txns.size()) {
      in_txn_ = true;
      if (cut_ != CutReason::kStopped) cut_ = CutReason::kNone;
      if (early_cut_ && early_cut_->first == t) cut_ = std::max(cut_, early_cut_->second);
      if (peer_end_ && peer_end_->txn == t) cut_ = std::max(cut_, CutReason::kPeerEnded);
      co_await run_txn(group.txns[t]);
      in_txn_ = false;
      sample_tcp(group.txns[t]);
    }
    early_cut_.reset();
    if (peer_end_ && peer_end_->txn <= t) peer_end_.reset();
    next_txn_ = t + 1;
    report_step_written();
    worker_.strand_done(t);
  }
  // Connections stay open until the engine finishes (close_all): closing them here, when this
  // side's last step ends, would show the peer, still inside that step, a closed connection.
}

void Strand::sample_tcp(const TxnPlan& txn) { add_tcp_readings(worker_.slot(txn.slot).tcp); }

void Strand::sample_tcp_now(std::vector<results::SlotStats>& slots) {
  const auto& txns = worker_.plan().groups[group_].txns;
  if (!in_txn_ || txn_ >= txns.size() || txns[txn_].slot >= slots.size()) return;
  add_tcp_readings(slots[txns[txn_].slot].tcp);
}

void Strand::add_tcp_readings(stats::TcpSummary& into) {
  if (!worker_.engine().config().sample_tcp) return;
  for (Connection& c : connections_) {
    auto* tcp = std::get_if<transport::TcpConnection>(&c.link);
    if (tcp == nullptr) continue;
    if (const auto reading = transport::read_tcp_info(tcp->socket().native_handle())) {
      into.add(*reading);
    }
  }
}

void Strand::close_all() {
  for (auto& c : connections_) on(c.link, [](auto& link) { link.close(); });
  connections_.clear();
  inbox_.clear();
}

void Strand::count_ok(const OpPlan& op, Clock::time_point from, Clock::time_point done,
                      bool timing) {
  results::SlotStats& stats = worker_.slot(op.slot);
  ++stats.counters.ops;
  if (timing) stats.latency.record(elapsed_ns(from, done));
}

awaitable<void> Strand::run_txn(const TxnPlan& txn) {
  const auto txn_start = worker_.txn_start();
  const bool slave = worker_.engine().config().slave_side;
  const auto* duration = std::get_if<profile::Duration>(&txn.bound);
  deadline_.reset();
  last_end_.reset();
  if (duration != nullptr && !slave) deadline_ = txn_start + duration->length;
  txn_slot_ = txn.slot;

  const bool moves_data = std::any_of(txn.ops.begin(), txn.ops.end(), [](const OpPlan& op) {
    return profile::traits(op.spec).connection != profile::OnConnection::kNone;
  });
  if (!moves_data && duration != nullptr && slave) {
    // Nothing to answer (no flowops, or only think and nop): no data from the master paces this
    // mirror, so looping would only burn the slave's CPU. Wait for the master to end the step.
    co_await sleep_until(Clock::time_point::max(), Waiting::kIdle);
    co_return;
  }
  std::optional<std::chrono::duration<double>> period;
  if (txn.rate_per_s && !slave) period = std::chrono::duration<double>(1.0 / *txn.rate_per_s);

  const std::uint64_t limit = duration != nullptr
                                  ? std::numeric_limits<std::uint64_t>::max()
                                  : std::get<profile::Iterations>(txn.bound).count;
  // One clock read per operation: each operation's end is the next one's start, and the last
  // one's end the next iteration's start. The clock costs ~27 ns here, a ping-pong round trip
  // ~10 us of CPU, so this keeps recording around 1%.
  const bool timing = worker_.engine().config().record_latency;
  // The iterations and their operations run here rather than in coroutines of their own: a
  // frame per iteration (and one per read) was an allocation per round trip, and Asio's
  // per-thread cache of two blocks missed it as soon as three were freed in a row.
  const OpPlan* datagrams = datagram_stream_op(txn);
  PendingRead pending{};  // the read in progress, when it must wait (set anew by every read)
  for (std::uint64_t i = 0; i < limit; ++i) {
    // An iteration may never suspend (nop, busy think, data always there): give way now and then
    // so the worker's other strands, cuts and interval requests run.
    if (worker_.over_budget()) {
      co_await worker_.yield();
      last_end_.reset();
    }
    // The peer's end of the step ends a duration-bound one here; an iterations-bound one runs
    // on, since the peer completed every iteration and each of this side's can complete too.
    if ((cut_ != CutReason::kNone && (cut_ != CutReason::kPeerEnded || duration != nullptr)) ||
        worker_.stopping()) {
      break;
    }
    const auto now = last_end_ ? *last_end_ : Clock::now();
    last_end_.reset();
    if (deadline_ && now >= *deadline_) break;
    auto intended = now;
    auto started = now;
    if (period) {
      // Intended start times come from the schedule, not from when the last one ended, so a
      // slow response does not hide the requests that should have been sent meanwhile (wrk2).
      intended = txn_start + std::chrono::duration_cast<Clock::duration>(*period * static_cast<double>(i));
      if (intended > now) {
        if (!co_await sleep_until(intended)) break;
        started = Clock::now();
      }
    }
    auto previous = started;
    // A datagram stream's iterations run in place (strand_datagram.cpp) until one must wait.
    std::optional<Started> begun_here;
    if (datagrams != nullptr) {
      const std::uint64_t first = i;
      begun_here = datagram_stream(txn, *datagrams, i, limit, previous, timing);
      if (!begun_here && i != first) {  // stopped between two iterations: the checks above decide
        --i;
        continue;
      }
      intended = started = previous;
    }
    bool fresh = false;  // `previous` was read from the clock, and nothing ran since
    bool go_on = true;
    for (auto op = txn.ops.begin(); go_on && op != txn.ops.end(); ++op) {
      for (std::uint64_t c = 0; c < op->common.count; ++c) {
        // Without a timer, the operation runs here rather than inside execute's frame.
        OpOutcome out;
        bool waiting = false;  // `pending` is a read that must wait: finished below
        Connection* stream = nullptr;
        // (A cut that ended the strand ends an operation with a timer the same way: execute()
        // asks first.)
        if (cut_ == CutReason::kEnded || cut_ == CutReason::kStopped) {
          out = aborted_outcome();
        } else if (!begun_here && (stream = tcp_stream(*op)) != nullptr) {
          // A TCP write or read (most operations of a ping-pong or a stream), begun here without
          // start()'s dispatch and its Started variant.
          if (const auto* w = std::get_if<profile::WriteOp>(&op->spec)) {
            std::uint64_t left = draw_size(*op, w->size);
            bool blocked = false;
            if (auto end = write_now(*op, *stream, left, std::nullopt, blocked)) {
              out = std::move(*end);
            } else {
              out = co_await send(*op, left, std::nullopt, blocked);
            }
          } else {
            const std::uint64_t bytes = draw_size(*op, std::get<profile::ReadOp>(op->spec).size);
            // Field by field: GCC 12 built a whole PendingRead (zeroed, then copied) here.
            pending.op = &*op;
            pending.c = stream;
            pending.bytes = pending.left = bytes;
            pending.chunk.reset();
            pending.ahead = true;
            if (auto end = begin_read(pending)) {
              out = std::move(*end);
            } else {
              waiting = true;
            }
          }
        } else if (needs_timer(*op)) {
          out = co_await execute(*op);
        } else {
          // (Not `?:`: GCC 12 miscompiles a co_await inside a conditional expression.)
          Started begun = begun_here ? std::move(*begun_here) : start(*op);
          begun_here.reset();
          if (auto* over = std::get_if<OpOutcome>(&begun)) {
            out = std::move(*over);
          } else if (auto* later = std::get_if<awaitable<OpOutcome>>(&begun)) {
            out = co_await std::move(*later);
          } else {
            pending = std::get<PendingRead>(begun);
            waiting = true;
          }
        }
        if (waiting) {
          // read_rest's loop, inline (see PendingRead).
          PendingRead& r = pending;
          for (;;) {
            std::span<char> into;
            if (auto stop = read_begin(r, into)) {
              out = std::move(*stop);
              break;
            }
            transport::ReadResult got;
            if (auto* tcp = std::get_if<transport::TcpConnection>(&r.c->link)) {
              got = co_await tcp->read_resuming(into);  // no frame, no dispatch
              resumed_after_read(*r.c, *tcp, &limit, got);
            } else {
              auto [ec, n] = co_await read_wait(r, into);
              got = {ec, n};
            }
            if (auto end = read_end(r, got.ec, got.bytes)) {
              out = std::move(*end);
              break;
            }
          }
        }
        worker_.count_progress();
        const auto done = timing ? Clock::now() : Clock::time_point{};
        if (out.status == OpOutcome::Status::kOk) [[likely]] {
          count_ok(*op, previous, done, timing);
        } else if (!account_op(txn, *op, out, previous, done, timing)) {
          go_on = false;
          break;
        }
        previous = done;
        fresh = timing;
        if (worker_.over_budget()) {
          co_await worker_.yield();
          fresh = false;
        }
      }
    }
    if (!go_on) break;
    if (fresh) last_end_ = previous;
    account_iteration(txn, intended, started, previous, timing);
  }
}

namespace {

/// Asks for the cache lines of [address, address + Bytes) ahead of use, unrolled (a fixed
/// number of prefetch instructions, no loop). A hint: an address that is stale (a strand's
/// connection or frame that went away) costs a wasted fetch, never a fault.
template <std::size_t Bytes>
void prefetch(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  [&]<std::size_t... Line>(std::index_sequence<Line...>) {
    (__builtin_prefetch(reinterpret_cast<const void*>(at + Line * 64)), ...);
  }(std::make_index_sequence<(Bytes + 63) / 64>());
  __builtin_prefetch(reinterpret_cast<const void*>(at + Bytes - 1));  // the line it ends in
}

/// Below this many strands on a worker their state stays in the cache (about 2 KiB each, against
/// a 1 MiB second level), and the prefetch would only cost its ~60 instructions.
constexpr std::size_t kPrefetchFromStrands = 256;

}  // namespace

void Strand::resumed_after_read(Connection& c, transport::TcpConnection& tcp, const void* frame,
                                const transport::ReadResult& got) {
  if (worker_.strand_count() < kPrefetchFromStrands) return;
  if (Strand* before = worker_.exchange_last_resumed(this); before != nullptr && before != this) {
    before->successor_ = {this, &c, tcp.reactor_state(), frame, got.op, got.entry_frame};
  }
  const Successor& next = successor_;
  if (next.strand == nullptr) return;
  // The spans: the strand's fields touched per operation (its first lines), a connection,
  // Asio 1.81's descriptor_state (168 bytes), the read's operation and the coroutine's entry frame
  // (each under 192), and run_txn's whole frame. GCC 12 allocates that frame in one block of
  // 1,104 bytes (the constant run_txn's ramp passes to awaitable_frame_base::operator new) and
  // puts `limit` 136 bytes into it; the locals and temporaries a round trip touches lie all over
  // it (perf annotate at 1,024 connections: samples at offsets 0x118 to 0x398), so the window
  // covers the whole frame, from 2 lines before `limit` (18 prefetches): a smaller window around
  // `limit` misses part of it whenever the layout moves. perf still samples loads at those
  // offsets; without hardware counters this VM cannot tell whether they miss or the samples
  // skid. To check the window after run_txn changes: objdump the ramp's frame size and the
  // offset of the `frame` argument at the call of resumed_after_read.
  constexpr std::size_t kAsioState = 192;
  constexpr std::uintptr_t kFrameBefore = 128;
  constexpr std::size_t kFrameBytes = 1152;
  prefetch<160>(next.strand);
  prefetch<sizeof(Connection)>(next.connection);
  prefetch<kAsioState>(next.reactor_state);
  prefetch<kAsioState>(next.read_op);
  prefetch<kAsioState>(next.entry_frame);
  prefetch<kFrameBytes>(reinterpret_cast<const void*>(
      reinterpret_cast<std::uintptr_t>(next.frame) - kFrameBefore));
}

bool Strand::account_op(const TxnPlan& txn, const OpPlan& op, OpOutcome& out,
                        Clock::time_point from, Clock::time_point done, bool timing) {
  results::SlotStats& stats = worker_.slot(op.slot);
  switch (out.status) {
    case OpOutcome::Status::kOk:  // (run_txn counts it itself: count_ok)
      count_ok(op, from, done, timing);
      return true;
    case OpOutcome::Status::kExpired:
      ++stats.counters.expired;
      if (opens_connection(op)) ++failed_opens_;
      return false;
    case OpOutcome::Status::kLost:
      ++stats.counters.datagrams.timeouts;
      return true;
    case OpOutcome::Status::kFailed:
      refused_at_header(op, out);
      ++stats.counters.errors[static_cast<std::size_t>(out.error)];
      ++worker_.slot(txn.slot).counters.errors[static_cast<std::size_t>(out.error)];
      worker_.note_error(where(op), out.message.take(), !op.common.canfail);
      if (!op.common.canfail) {
        failed_ = true;
        return false;
      }
      if (opens_connection(op)) ++failed_opens_;
      return cut_ != CutReason::kEnded && cut_ != CutReason::kStopped;
  }
  return true;
}

void Strand::account_iteration(const TxnPlan& txn, Clock::time_point intended,
                               Clock::time_point started, Clock::time_point ended, bool timing) {
  results::SlotStats& stats = worker_.slot(txn.slot);
  ++stats.counters.ops;
  if (timing) {
    stats.latency.record(elapsed_ns(intended, ended));
    if (txn.uncorrected_slot) {
      worker_.slot(*txn.uncorrected_slot).latency.record(elapsed_ns(started, ended));
    }
  }
}

std::optional<std::chrono::nanoseconds> Strand::op_timeout(const OpPlan& op) {
  if (!needs_timer(op)) return std::nullopt;
  return op.common.timeout ? op.common.timeout : udp_read_timeout(op);
}

bool Strand::needs_timer(const OpPlan& op) {
  // Asked before every operation, so without building op_timeout's value. timeout= is the
  // master's: a slave follows the master's data, so its mirror of a timed-out write reads
  // exactly the bytes that were sent, and is cut with the step.
  if (worker_.engine().config().slave_side) return false;
  return op.common.timeout.has_value() ||
         (std::holds_alternative<profile::ReadOp>(op.spec) && udp_read_timeout(op).has_value());
}

awaitable<OpOutcome> Strand::execute(const OpPlan& op) {
  if (cut_ == CutReason::kEnded || cut_ == CutReason::kStopped) co_return aborted_outcome();
  const auto timeout = op_timeout(op);
  const std::uint64_t seq = ++op_seq_;
  if (timeout) {
    if (!op_timer_) op_timer_ = std::make_unique<asio::steady_timer>(worker_.context());
    op_timer_->expires_after(*timeout);
    op_timer_->async_wait([this, seq](const error_code& ec) {
      if (ec || seq != op_seq_ || cut_ != CutReason::kNone) return;
      cut_ = CutReason::kTimeout;
      cancel_waits();
    });
  }
  Started begun = start(op);
  // (Not `?:`, nor finish(), which would cost a frame: GCC 12 miscompiles a co_await inside a
  // conditional expression.)
  OpOutcome out;
  if (auto* over = std::get_if<OpOutcome>(&begun)) {
    out = std::move(*over);
  } else if (auto* later = std::get_if<awaitable<OpOutcome>>(&begun)) {
    out = co_await std::move(*later);
  } else {
    out = co_await read_rest(std::get<PendingRead>(begun));
  }
  ++op_seq_;  // a timeout that fires from now on belongs to no operation
  if (timeout) op_timer_->cancel();
  if (cut_ == CutReason::kTimeout) cut_ = CutReason::kNone;
  co_return out;
}

// Not a coroutine: an operation that is over without waiting (most writes, disconnect, nop) is
// done here and costs no coroutine frame; the others return their own awaitable (lazy, started by
// the caller's co_await).
Strand::Started Strand::start(const OpPlan& op) {
  return std::visit(
      Overloaded{
          [&](const profile::ConnectOp& c) -> Started { return do_connect(op, c); },
          [&](const profile::AcceptOp& a) -> Started { return do_accept(op, a); },
          [&](const profile::DisconnectOp&) -> Started {
            if (find(op.common.connection) == nullptr) return not_connected(op);
            close(op.common.connection);
            return OpOutcome{};
          },
          [&](const profile::WriteOp& w) -> Started { return write(op, w); },
          [&](const profile::ReadOp& r) -> Started { return read(op, r); },
          [&](const profile::SendfileOp& s) -> Started {
            return do_sendfile(op, 1, s.chunk_bytes);
          },
          [&](const profile::SendfilevOp& s) -> Started {
            return do_sendfile(op, s.nfiles, s.chunk_bytes);
          },
          [&](const profile::RecvFileOp& r) -> Started {
            return receive(op, draw_file_bytes(op, r.nfiles), {});
          },
          [&](const profile::ThinkOp& t) -> Started { return do_think(t); },
          [&](const profile::NopOp&) -> Started { return OpOutcome{}; },
      },
      op.spec);
}

awaitable<OpOutcome> Strand::do_connect(const OpPlan& op, const profile::ConnectOp& c) {
  const EngineConfig& config = worker_.engine().config();
  transport::ConnectionHeader who{config.token, static_cast<std::uint32_t>(group_),
                                  static_cast<std::uint32_t>(index_), op.common.connection};
  if (config.connect_in_memory) {
    worker_.count_connection(false);
    connections_.push_back(Connection{op.common.connection,
                                      config.connect_in_memory(worker_.context().get_executor(), who),
                                      next_serial(op.common.connection, 0)});
    worker_.count_connection(true);
    co_return OpOutcome{};
  }
  const HostTarget* target = nullptr;  // not copied: a connect must not allocate
  if (config.peer) {
    target = &*config.peer;
  } else {
    const auto it = config.targets.find(c.connection.remotehost);
    if (it == config.targets.end()) {
      co_return OpOutcome{OpOutcome::Status::kFailed, results::ErrorKind::kUnreachable,
                          fmt::format("no slave serves remotehost '{}'", c.connection.remotehost)};
    }
    target = &it->second;
  }
  who.token = config.tokens().token_for(target->peer);
  const asio::ip::tcp::endpoint endpoint(target->address,
                                         c.connection.port.value_or(target->port_for(index_)));
  if (c.connection.protocol == profile::Protocol::kUdp) {
    co_return co_await connect_udp(op, c, endpoint.address(), endpoint.port(), who, target->peer);
  }
  // A slot of the worker's connects in flight (see ConnectGate), held until the header is out.
  ConnectGate& gate = worker_.connect_gate();
  if (!gate.try_enter()) {
    bool granted = false;
    gate.queue(timer_, granted);
    while (!granted) {
      if (!may_wait(Waiting::kConnect)) {
        gate.forget(timer_);
        co_return aborted_outcome();
      }
      timer_.expires_at(Clock::time_point::max());
      worker_.budget_renewed();
      waits_for(Waiting::kConnect);
      co_await timer_.async_wait(kAwait);
      waits_for(Waiting::kNothing);
    }
    if (!may_wait(Waiting::kConnect)) {  // granted and cut together: pass the slot on
      gate.leave();
      co_return aborted_outcome();
    }
  }
  worker_.count_connection(false);
  transport::TcpConnection& tcp = fresh_tcp(op.common.connection);
  Socket& socket = tcp.socket();
  error_code ec = tcp.open(endpoint.protocol());
  if (!ec) ec = transport::apply_options(socket, c.connection);
  const std::string* source = nullptr;
  if (!ec) {
    source = bind_source(socket, c.connection.source_addresses, index_, endpoint.address(), ec);
  }
  if (ec) {
    gate.leave();
    close(op.common.connection);
    co_return failure_from(ec, source == nullptr
                                   ? std::string("socket")
                                   : bind_source_context(*source, endpoint.address()));
  }
  if (!may_wait(Waiting::kConnect)) {  // see wait_ready
    gate.leave();
    close(op.common.connection);
    co_return aborted_outcome();
  }
  active_ = &connections_.back().link;
  worker_.budget_renewed();
  waits_for(Waiting::kConnect);
  auto [connect_ec] = co_await socket.async_connect(endpoint, kAwait);
  const bool connected = !connect_ec;
  if (connected) {
    // A fresh connection's send buffer takes 20 bytes at once: written in place, without an
    // asynchronous write's operation (memory held by every connection in a connect storm).
    const auto header = transport::encode(who);
    std::size_t sent = 0;
    socket.non_blocking(true, connect_ec);
    if (!connect_ec) sent = socket.write_some(asio::buffer(header), connect_ec);
    if (connect_ec == asio::error::would_block) connect_ec = {};
    if (!connect_ec && sent < header.size()) {
      auto [header_ec, n] = co_await asio::async_write(socket, asio::buffer(header) + sent, kAwait);
      connect_ec = header_ec;
    }
  }
  gate.leave();
  active_ = nullptr;
  waits_for(Waiting::kNothing);
  if (connect_ec) {
    if (connect_ec == asio::error::operation_aborted) {
      close(op.common.connection);
      co_return aborted_outcome();
    }
    OpOutcome out =
        failure_from(connect_ec, fmt::format("connect to {}", endpoint.address().to_string()));
    if (connected) refused_at_header(op, out);  // the header's write failed: before close()
    close(op.common.connection);
    co_return out;
  }
  socket.non_blocking(true, ec);
  // Numbered only once connected: a connect that failed opened nothing on the peer's side.
  connections_.back().serial = next_serial(op.common.connection, target->peer);
  connections_.back().peer = target->peer;
  worker_.count_connection(true);
  worker_.count_connected(target, endpoint.port());
  co_return OpOutcome{};
}

awaitable<OpOutcome> Strand::do_accept(const OpPlan& op, const profile::AcceptOp& a) {
  const std::uint32_t id = op.common.connection;
  worker_.count_connection(false);
  for (;;) {
    auto box = std::find_if(inbox_.begin(), inbox_.end(),
                            [id](const auto& entry) { return entry.first == id; });
    if (box != inbox_.end() && !box->second.empty()) {
      const std::uint32_t peer = box->second.front().peer;
      transport::AnyConnection link = std::move(box->second.front().link);
      box->second.erase(box->second.begin());
      // An emptied box would keep its buffer (a connection's size) for the strand's life.
      if (box->second.empty()) inbox_.erase(box);
      if (inbox_.empty()) inbox_.shrink_to_fit();
      error_code ec;
      if (auto* tcp = std::get_if<transport::TcpConnection>(&link)) {
        ec = transport::apply_options(tcp->socket(), a.connection);
        if (!ec) tcp->socket().non_blocking(true, ec);
      }
      if (ec) co_return failure_from(ec, "accepted socket");
      connections_.push_back(Connection{id, std::move(link), next_serial(id, peer), peer});
      worker_.count_connection(true);
      co_return OpOutcome{};
    }
    if (!may_wait(Waiting::kAccept)) co_return aborted_outcome();  // see wait_ready
    awaiting_conn_ = id;
    worker_.budget_renewed();
    timer_.expires_at(Clock::time_point::max());
    worker_.accept_wait_begins();
    waits_for(Waiting::kAccept);
    co_await timer_.async_wait(kAwait);
    waits_for(Waiting::kNothing);
    worker_.accept_wait_ends();
    awaiting_conn_.reset();
    // Woken by the connection it waits for, by a cut, or by the peer's end of the step: a
    // connection that came is taken first (the loop), whatever woke it.
    if (cut_short()) co_return aborted_outcome();
  }
}

awaitable<std::optional<OpOutcome>> Strand::wait_ready(transport::AnyConnection& link,
                                                      transport::Wait what, const char* op_name) {
  // A cut cancels the wait in progress, and only that one: one that came while this strand was
  // runnable (its last wait already complete, its resumption queued) must be seen here, or the
  // strand would wait for data that never comes, and its step would never end.
  const Waiting waiting = what == transport::Wait::kWritable ? Waiting::kWrite : Waiting::kRead;
  if (!may_wait(waiting)) co_return aborted_outcome();
  active_ = &link;
  worker_.budget_renewed();
  waits_for(waiting);
  auto [ec] = co_await on(link, [what](auto& c) { return c.wait(what); });
  waits_for(Waiting::kNothing);
  active_ = nullptr;
  if (!ec) co_return std::nullopt;
  if (ec == asio::error::operation_aborted) co_return aborted_outcome();
  co_return failure_from(ec, op_name);
}

Strand::Started Strand::write(const OpPlan& op, const profile::WriteOp& w) {
  const std::uint64_t bytes = draw_size(op, w.size);
  Connection* c = find(op.common.connection);
  if (c == nullptr) return send(op, bytes, w.chunk_bytes, false);
  if (std::holds_alternative<transport::UdpConnection>(c->link)) {
    return datagram(op, *c, Direction::kWrite, bytes);
  }
  // A write almost always fits the socket buffer: done here, it needs no coroutine frame.
  std::uint64_t left = bytes;
  bool blocked = false;
  if (auto end = write_now(op, *c, left, w.chunk_bytes, blocked)) return std::move(*end);
  return send(op, left, w.chunk_bytes, blocked);
}

Strand::Started Strand::read(const OpPlan& op, const profile::ReadOp& r) {
  return receive(op, draw_size(op, r.size), r.chunk_bytes);
}

awaitable<OpOutcome> Strand::finish(Started begun) {
  if (auto* over = std::get_if<OpOutcome>(&begun)) co_return std::move(*over);
  if (auto* later = std::get_if<awaitable<OpOutcome>>(&begun)) co_return co_await std::move(*later);
  co_return co_await read_rest(std::get<PendingRead>(begun));
}

std::optional<OpOutcome> Strand::write_now(const OpPlan& op, Connection& c, std::uint64_t& left,
                                           std::optional<std::uint64_t> chunk, bool& blocked) {
  const std::span<char> buffer = worker_.buffer();
  const std::uint64_t per_call = std::min<std::uint64_t>(buffer.size(), chunk.value_or(buffer.size()));
  blocked = false;
  while (left > 0) {
    const std::span<char> piece(buffer.data(), static_cast<std::size_t>(std::min(left, per_call)));
    // Try the system call first: a write almost always fits the socket buffer; going straight to
    // it saves a trip through the event loop. Only when there is no room does the strand wait.
    const transport::IoResult io = on(c.link, [piece](auto& link) { return link.try_write(piece); });
    if (io.would_block()) {
      blocked = true;
      return std::nullopt;
    }
    add_written(op, io.bytes);
    c.step_written += io.bytes;
    if (io.ec) return failure_from(io.ec, "write");
    left -= io.bytes;
    worker_.count_progress();
    if (left > 0 && worker_.over_budget()) return std::nullopt;  // give way (see send)
  }
  return OpOutcome{};
}

awaitable<OpOutcome> Strand::send(const OpPlan& op, std::uint64_t bytes,
                                  std::optional<std::uint64_t> chunk, bool wait_first) {
  Connection* c = find(op.common.connection);
  if (c == nullptr) co_return not_connected(op);
  if (std::holds_alternative<transport::UdpConnection>(c->link)) {
    co_return co_await finish(datagram(op, *c, Direction::kWrite, bytes));
  }
  std::uint64_t left = bytes;
  bool blocked = wait_first;
  for (;;) {
    if (blocked) {
      if (auto stop = co_await wait_ready(c->link, transport::Wait::kWritable, "write")) {
        co_return *stop;
      }
    } else if (left > 0) {
      // A writer that always finds room never suspends: write_now gave way to the others.
      co_await worker_.yield();
      if (cut_short()) co_return aborted_outcome();
    }
    if (auto end = write_now(op, *c, left, chunk, blocked)) co_return *end;
  }
}

Strand::Started Strand::receive(const OpPlan& op, std::uint64_t bytes,
                                std::optional<std::uint64_t> chunk) {
  Connection* c = find(op.common.connection);
  if (c == nullptr) return not_connected(op);
  if (std::holds_alternative<transport::UdpConnection>(c->link)) {
    return datagram(op, *c, Direction::kRead, bytes);
  }
  PendingRead r{&op, c, bytes, bytes, chunk,
                !chunk && on(c->link, [](const auto& link) { return link.reads_ahead(); })};
  if (auto end = begin_read(r)) return std::move(*end);
  return r;
}

std::optional<OpOutcome> Strand::begin_read(PendingRead& r) {
  Connection& c = *r.c;
  // A message of kWakeFrom or more comes as a stream: its reads count what is left, exactly,
  // rather than take a short read as the end of what is there (see transport::DrainRule).
  if (auto* tcp = std::get_if<transport::TcpConnection>(&c.link)) {
    tcp->count_reads(r.bytes >= kWakeFrom);
  }
  if (const std::uint64_t n = take_stash(c, r.left); n > 0) {
    add_read(*r.op, n);
    c.step_read += n;
    r.left -= n;
  }
  if (r.left == 0) return OpOutcome{};
  if (r.ahead) return read_now(r);
  return std::nullopt;
}

Strand::Connection* Strand::tcp_stream(const OpPlan& op) {
  if (!op.plain_stream) return nullptr;
  Connection* c = find(op.common.connection);
  if (c == nullptr || !std::holds_alternative<transport::TcpConnection>(c->link)) return nullptr;
  return c;
}

std::optional<OpOutcome> Strand::read_now(PendingRead& r) {
  auto* tcp = std::get_if<transport::TcpConnection>(&r.c->link);
  if (tcp == nullptr || tcp->known_drained()) return std::nullopt;
  // A cut is seen by read_begin (see wait_ready); after the peer's end of the step, read_begin
  // decides whether the read goes on.
  while (cut_ == CutReason::kNone) {
    // As read_begin asks: a short read tells the reactor the socket drained.
    const transport::IoResult io = tcp->read_now(stream_ask(worker_.buffer(), *r.op));
    if (io.would_block()) return std::nullopt;
    if (auto end = read_end(r, io.ec, io.bytes)) return end;
    if (worker_.over_budget()) return std::nullopt;  // give way: the rest through the event loop
  }
  return std::nullopt;
}

std::optional<OpOutcome> Strand::read_begin(PendingRead& r, std::span<char>& into) {
  // A cut that came while this strand was runnable must be seen here (see wait_ready); after
  // the peer's end of the step, the read goes on only for bytes the peer wrote.
  if (!may_wait(Waiting::kRead, r.c)) return aborted_outcome();
  waits_for(Waiting::kRead, r.c);
  // Without chunk=, ask for kStreamReadAsk, not just this flowop's bytes: a read that returns
  // less than it asked for tells the reactor the socket is drained, so the next read waits for
  // epoll instead of trying a read that fails with EAGAIN (one wasted system call per round trip
  // of a ping-pong otherwise). Bytes beyond the flowop's wait in the stash for the next read.
  expect(*r.c, r.left);
  const std::span<char> buffer = worker_.buffer();
  into = r.ahead ? stream_ask(buffer, *r.op)
                 : buffer.first(static_cast<std::size_t>(std::min(
                       {r.left, r.chunk.value_or(r.left), std::uint64_t{buffer.size()}})));
  active_ = &r.c->link;
  worker_.budget_renewed();  // a read completes through the event loop, as a wait does
  return std::nullopt;
}

transport::ReadAwaitable Strand::read_wait(PendingRead& r, std::span<char> into) {
  return on(r.c->link, [into](auto& link) { return link.read(into); });
}

std::optional<OpOutcome> Strand::read_end(PendingRead& r, const error_code& ec, std::size_t got) {
  active_ = nullptr;
  waiting_ = Waiting::kNothing;
  Connection& c = *r.c;
  const std::uint64_t used = std::min<std::uint64_t>(got, r.left);
  c.stash += got - used;
  add_read(*r.op, used);
  c.step_read += used;
  r.left -= used;
  if (ec) [[unlikely]] {
    // After the peer's end of the step, a connection it closed ends a read as the end does.
    if (ec == asio::error::eof && cut_ == CutReason::kPeerEnded) return aborted_outcome();
    if (ec == asio::error::eof) {
      return OpOutcome{OpOutcome::Status::kFailed, results::ErrorKind::kPeerClosed,
                       fmt::format("read: peer closed the connection with {} of {} bytes "
                                   "still to come",
                                   r.left, r.bytes)};
    }
    if (ec == asio::error::operation_aborted) return aborted_outcome();
    return failure_from(ec, "read");
  }
  worker_.count_progress();
  if (r.left == 0) return OpOutcome{};
  return std::nullopt;
}

awaitable<OpOutcome> Strand::read_rest(PendingRead r) {
  for (;;) {
    std::span<char> into;
    if (auto stop = read_begin(r, into)) co_return std::move(*stop);
    transport::ReadResult got;
    if (auto* tcp = std::get_if<transport::TcpConnection>(&r.c->link)) {
      got = co_await tcp->read_resuming(into);
    } else {
      auto [ec, n] = co_await read_wait(r, into);
      got = {ec, n};
    }
    if (auto end = read_end(r, got.ec, got.bytes)) co_return std::move(*end);
  }
}

void Strand::expect(Connection& c, std::uint64_t bytes) {
  if (auto* tcp = std::get_if<transport::TcpConnection>(&c.link)) {
    tcp->wake_after(bytes >= kWakeFrom ? static_cast<std::size_t>(std::min<std::uint64_t>(
                                             bytes, transport::TcpConnection::kMaxWakeAfter))
                                       : 1);
  }
}

std::uint64_t Strand::take_stash(Connection& c, std::uint64_t most) {
  const std::uint64_t n = std::min(most, c.stash);
  c.stash -= n;
  return n;
}

awaitable<OpOutcome> Strand::do_sendfile(const OpPlan& op, std::uint64_t nfiles,
                                         std::optional<std::uint64_t> chunk) {
  Connection* c = find(op.common.connection);
  if (c == nullptr) co_return not_connected(op);
  const FileSet& set = worker_.plan().file_sets.at(*op.file_set);
  const std::uint64_t per_call = chunk.value_or(std::uint64_t{1} << 30);
  for (std::uint64_t f = 0; f < nfiles; ++f) {
    const FileEntry& file = set.files[pick_file(op, set)];
    const int fd = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      co_return OpOutcome{OpOutcome::Status::kFailed, results::ErrorKind::kFile,
                          fmt::format("open {}: {}", file.path, std::strerror(errno))};
    }
    off_t offset = 0;
    std::uint64_t left = file.size_bytes;
    OpOutcome out;
    while (left > 0) {
      const auto want = static_cast<std::size_t>(std::min(left, per_call));
      const transport::IoResult io =
          on(c->link, [fd, &offset, want](auto& link) { return link.sendfile(fd, &offset, want); });
      if (io.bytes > 0) {
        const auto n = static_cast<std::uint64_t>(io.bytes);
        left -= n;
        add_written(op, n);
        c->step_written += n;
        worker_.count_progress();
        if (left > 0 && worker_.over_budget()) {
          co_await worker_.yield();
          if (cut_short()) {
            out = aborted_outcome();
            break;
          }
        }
        continue;
      }
      if (io.would_block()) {
        if (auto stop = co_await wait_ready(c->link, transport::Wait::kWritable, "sendfile")) {
          out = std::move(*stop);
          break;
        }
        continue;
      }
      if (!io.ec) {
        // The file shrank since the run was planned: the peer would wait for bytes that will
        // never come, so this is an error, not a short transfer.
        out = OpOutcome{OpOutcome::Status::kFailed, results::ErrorKind::kFile,
                        fmt::format("sendfile {}: file is shorter than the {} bytes planned",
                                    file.path, file.size_bytes)};
      } else {
        out = failure_from(io.ec, "sendfile");
      }
      break;
    }
    ::close(fd);
    if (out.status != OpOutcome::Status::kOk) co_return out;
  }
  co_return OpOutcome{};
}

awaitable<OpOutcome> Strand::do_think(const profile::ThinkOp& t) {
  const auto end = Clock::now() + t.duration;
  const bool truncated = deadline_ && end > *deadline_;
  const auto until = truncated ? *deadline_ : end;
  worker_.think_begins();
  struct Ends {
    Worker& worker;
    ~Ends() { worker.think_ends(); }
  } ends{worker_};  // on every way out, a cut included
  if (t.busy) {
    // Spin in short slices, giving way between them: the worker's other strands keep running
    // (at a share of the CPU) and a cut or a timeout ends the think.
    for (;;) {
      const auto slice_end = std::min(until, Clock::now() + kSpinSlice);
      while (Clock::now() < slice_end) {
      }
      if (slice_end >= until) break;
      co_await worker_.yield();
      if (!may_wait(Waiting::kThink)) co_return aborted_outcome();
    }
  } else if (!co_await sleep_until(until)) {
    co_return aborted_outcome();
  }
  if (truncated) co_return OpOutcome{OpOutcome::Status::kExpired, results::ErrorKind::kOther, {}};
  co_return OpOutcome{};
}

awaitable<bool> Strand::sleep_until(Clock::time_point when, Waiting what) {
  if (!may_wait(what)) co_return false;  // see wait_ready
  const bool truncated = deadline_ && when > *deadline_;
  timer_.expires_at(truncated ? *deadline_ : when);
  worker_.budget_renewed();
  waits_for(what);
  co_await timer_.async_wait(kAwait);
  waits_for(Waiting::kNothing);
  if (!may_wait(what)) co_return false;
  co_return !truncated;
}

// Counters are looked up on every use, never held across a suspension: the worker swaps its
// interval storage out between two resumptions of a strand.
void Strand::add_read(const OpPlan& op, std::uint64_t n) {
  worker_.slot(op.slot).counters.bytes_read += n;
  worker_.slot(txn_slot_).counters.bytes_read += n;
}

void Strand::add_written(const OpPlan& op, std::uint64_t n) {
  worker_.slot(op.slot).counters.bytes_written += n;
  worker_.slot(txn_slot_).counters.bytes_written += n;
}

void Strand::deliver(std::uint32_t conn, std::uint32_t peer, transport::AnyConnection link) {
  auto box = std::find_if(inbox_.begin(), inbox_.end(),
                          [conn](const auto& entry) { return entry.first == conn; });
  if (box == inbox_.end()) {
    inbox_.emplace_back(std::piecewise_construct, std::forward_as_tuple(conn), std::forward_as_tuple());
    box = std::prev(inbox_.end());
  }
  box->second.push_back(Arrived{peer, std::move(link)});
  if (awaiting_conn_ == conn) timer_.cancel();
}

void Strand::cut(std::size_t txn, CutReason reason) {
  if (!in_txn_ || txn_ != txn) {
    // A step this strand has not entered yet: its worker can run the step's cut before the
    // strand's resumption from the step's release (both queued while the worker waited for a
    // CPU). Kept, so that the strand ends the step as soon as it enters it rather than running
    // a step its peer has already ended.
    if (!in_txn_ && txn >= next_txn_) {
      // After the peer's end of that step, a quiet cut is that end: the strand runs what it can.
      if (reason == CutReason::kEnded && peer_end_ && peer_end_->txn == txn) {
        reason = CutReason::kPeerEnded;
      }
      if (!early_cut_ || early_cut_->first != txn) early_cut_.emplace(txn, reason);
      early_cut_->second = std::max(early_cut_->second, reason);
    }
    return;
  }
  // After the peer's end of the step, the quiet cut (the slave's bound on what cannot be known
  // to complete: a datagram, a connection the kernel may still bring) spares a strand that is
  // reading bytes the peer wrote on TCP, which are bound to come, and one not waiting at all.
  if (reason == CutReason::kEnded && cut_ == CutReason::kPeerEnded) {
    const bool tcp_owed = waiting_ == Waiting::kRead && reading_ != nullptr &&
                          std::holds_alternative<transport::TcpConnection>(reading_->link) &&
                          owed(*reading_) > 0;
    if (tcp_owed || waiting_ == Waiting::kNothing) return;
  }
  if (reason > cut_) cut_ = reason;
  cancel_waits();
}

void Strand::peer_ended(std::size_t txn, std::vector<ConnectionBytes> written) {
  const bool inside = in_txn_ && txn_ == txn;
  if (!inside && (in_txn_ || txn < next_txn_)) return;  // that step is over here already
  peer_end_ = PeerEnd{txn, std::move(written)};
  if (!inside || cut_ >= CutReason::kPeerEnded) return;
  cut_ = CutReason::kPeerEnded;
  if (waiting_ != Waiting::kNothing && !can_complete(waiting_, reading_)) cancel_waits();
}

void Strand::recheck_peer_end() {
  if (in_txn_ && cut_ == CutReason::kPeerEnded && waiting_ == Waiting::kAccept &&
      !can_complete(Waiting::kAccept, nullptr)) {
    cancel_waits();
  }
}

bool Strand::can_complete(Waiting what, const Connection* c) const {
  switch (what) {
    case Waiting::kRead:
      if (c == nullptr) return false;
      if (std::holds_alternative<transport::UdpConnection>(c->link)) return true;
      return owed(*c) > 0;
    case Waiting::kAccept:
      return worker_.engine().accepts_outstanding();
    case Waiting::kThink:
    case Waiting::kHello:
      return true;
    case Waiting::kNothing:
    case Waiting::kWrite:
    case Waiting::kConnect:
    case Waiting::kIdle:
      return false;
  }
  return false;
}

std::uint64_t Strand::owed(const Connection& c) const {
  if (!peer_end_) return 0;
  for (const ConnectionBytes& e : peer_end_->written) {
    if (e.conn != c.id || e.serial != c.serial || e.peer != c.peer) continue;
    const std::uint64_t have = c.step_read + c.stash;
    return e.bytes > have ? e.bytes - have : 0;
  }
  // Not listed: the peer closed it (or wrote nothing on it); what it wrote on the ones it closed
  // is known only as a sum per id.
  return owed_unlisted(c.id, c.peer, peer_end_->written);
}

void Strand::stop() {
  cut_ = CutReason::kStopped;
  cancel_waits();
}

void Strand::cancel_waits() {
  if (active_ != nullptr) on(*active_, [](auto& link) { link.cancel(); });
  timer_.cancel();
}

// Each connection id is a pool, as in uperf: connect and accept add a connection, disconnect
// closes the newest, and reads and writes use the newest. The mirror does the same, so both ends
// agree on which connection every operation uses.
Strand::Connection* Strand::find(std::uint32_t id) {
  for (auto it = connections_.rbegin(); it != connections_.rend(); ++it) {
    if (it->id == id) return &*it;
  }
  return nullptr;
}

transport::TcpConnection& Strand::fresh_tcp(std::uint32_t id) {
  connections_.push_back(
      Connection{id, transport::TcpConnection(Socket(worker_.context()))});
  return std::get<transport::TcpConnection>(connections_.back().link);
}

void Strand::close(std::uint32_t id) {
  for (auto it = connections_.rbegin(); it != connections_.rend(); ++it) {
    if (it->id == id) {
      note_closed(*it);
      on(it->link, [](auto& link) { link.close(); });
      connections_.erase(std::next(it).base());
      return;
    }
  }
}

RandomStream& Strand::stream(std::uint32_t conn) {
  for (auto& [id, s] : streams_) {
    if (id == conn) return s;
  }
  streams_.emplace_back(conn, RandomStream::for_connection(worker_.engine().config().seed, group_,
                                                           index_, conn, txn_));
  return streams_.back().second;
}

// Draws come from the operation's connection's stream: a slave that serves only some of a
// strand's connections draws, for each of them, what the master draws.
std::uint64_t Strand::draw_size(const OpPlan& op, const profile::SizeSpec& size) {
  if (!size.is_random()) return size.min_bytes;
  return stream(op.common.connection).between(size.min_bytes, size.max_bytes);
}

std::size_t Strand::pick_file(const OpPlan& op, const FileSet& set) {
  // Draw only when there is a choice, on both sides alike, so the streams stay in step.
  if (set.files.size() <= 1) return 0;
  return static_cast<std::size_t>(stream(op.common.connection).between(0, set.files.size() - 1));
}

std::uint64_t Strand::draw_file_bytes(const OpPlan& op, std::uint64_t nfiles) {
  const FileSet& set = worker_.plan().file_sets.at(*op.file_set);
  std::uint64_t total = 0;
  for (std::uint64_t f = 0; f < nfiles; ++f) total += set.files[pick_file(op, set)].size_bytes;
  return total;
}

OpOutcome Strand::failure_from(const error_code& ec, const std::string& what) {
  return OpOutcome{OpOutcome::Status::kFailed, classify(ec), fmt::format("{}: {}", what, ec.message())};
}

void Strand::refused_at_header(const OpPlan& op, OpOutcome& out) {
  if (out.error != results::ErrorKind::kPeerClosed && out.error != results::ErrorKind::kReset) return;
  if (worker_.engine().config().slave_side) return;  // the master's listener: its own log says
  Connection* c = find(op.common.connection);
  auto* tcp = c == nullptr ? nullptr : std::get_if<transport::TcpConnection>(&c->link);
  if (tcp == nullptr || !transport::closed_at_header(tcp->socket().native_handle())) return;
  out.error = results::ErrorKind::kRefused;
  out.message = fmt::format(
      "the slave closed data connection {} before any data passed on it: a slave closes a data "
      "connection whose header did not reach it within its --header-timeout (5s unless volley "
      "serve was given another; a loaded master can be that late), or that it refused, or when "
      "it stops; the slave's log says which",
      op.common.connection == 0 ? std::string("(anonymous)") : std::to_string(op.common.connection));
}

OpOutcome Strand::not_connected(const OpPlan& op) {
  // A pool one short because a connect with canfail failed is the usual cause: say so, so that
  // the run's failure explains itself.
  const std::string why =
      failed_opens_ == 0
          ? std::string()
          : fmt::format(" ({} connect or accept operation{} of this strand failed or {} cut "
                        "earlier, allowed by canfail or by the end of its step)",
                        failed_opens_, failed_opens_ == 1 ? "" : "s",
                        failed_opens_ == 1 ? "was" : "were");
  return OpOutcome{OpOutcome::Status::kFailed, results::ErrorKind::kNotConnected,
                   fmt::format("{}: connection {} is not open{}", op.type,
                               op.common.connection == 0 ? std::string("(anonymous)")
                                                         : std::to_string(op.common.connection),
                               why)};
}

OpOutcome Strand::aborted_outcome() {
  if (cut_ == CutReason::kTimeout) {
    return OpOutcome{OpOutcome::Status::kFailed, results::ErrorKind::kTimedOut, "timed out"};
  }
  return OpOutcome{OpOutcome::Status::kExpired, results::ErrorKind::kOther, {}};
}

std::string Strand::where(const OpPlan& op) const {
  const Plan& plan = worker_.plan();
  const GroupPlan& g = plan.groups[group_];
  return fmt::format("{}/{}/{} (strand {})", group_display_name(g, group_),
                     txn_display_name(g.txns[txn_], txn_), op.type, index_);
}

}  // namespace volley::engine
