#include "udp_ops.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <tuple>

#include <boost/asio/ip/udp.hpp>
#include <fmt/format.h>

#include "source_address.hpp"
#include "step_ledger.hpp"
#include "strand_core.hpp"
#include "volley/core/host_port.hpp"
#include "volley/transport/datagram.hpp"

namespace volley::engine {

namespace asio = boost::asio;
using asio::awaitable;
using boost::system::error_code;

namespace {

/// The largest UDP payload over IPv4.
constexpr std::uint64_t kMaxDatagramBytes = 65507;
/// The handshake: hello, then look for the answer after these pauses (about 200 ms in all),
/// then hello again, at most kHelloTries times (about 5 s, as a TCP connect's patience).
constexpr std::array<std::chrono::milliseconds, 6> kHelloPauses{
    std::chrono::milliseconds(1),  std::chrono::milliseconds(3),  std::chrono::milliseconds(8),
    std::chrono::milliseconds(20), std::chrono::milliseconds(50), std::chrono::milliseconds(118)};
constexpr int kHelloTries = 25;

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

/// Opens `socket` for `c`'s options (window=, srcaddr=) towards `address`; the error says what
/// failed.
OpOutcome open_socket(StrandCore& s, asio::ip::udp::socket& socket, const profile::ConnectOp& c,
                      const asio::ip::udp::endpoint& listener) {
  error_code ec;
  socket.open(listener.protocol(), ec);
  if (!ec && c.connection.window_bytes) {
    const auto n = static_cast<int>(std::min<std::uint64_t>(*c.connection.window_bytes, 1U << 30));
    socket.set_option(asio::socket_base::send_buffer_size(n), ec);
    if (!ec) socket.set_option(asio::socket_base::receive_buffer_size(n), ec);
  }
  if (!ec) socket.non_blocking(true, ec);
  // srcaddr= as for TCP; the slave answers the address the hello came from (UdpListener).
  const std::string* source = nullptr;
  if (!ec) {
    source = bind_source(socket, c.connection.source_addresses, s.index_, listener.address(), ec);
  }
  if (!ec) return OpOutcome{};
  return s.failure_from(ec, source == nullptr ? std::string("udp socket")
                                              : bind_source_context(*source, listener.address()));
}

/// Reads what answers to the hello have come on connection `id` (the strand's newest of that id:
/// nothing else ran on the strand since the hello), and connects it to the data port the first
/// answer names. The outcome once connected or failed; nullopt while no answer came.
std::optional<OpOutcome> take_answer(StrandCore& s, std::uint32_t id, const ConnectTarget& to) {
  std::array<char, 64> answer{};
  auto& udp = std::get<transport::UdpConnection>(s.find(id)->link);
  auto& socket = udp.socket();
  for (;;) {
    error_code ec;
    asio::ip::udp::endpoint from;
    const std::size_t n = socket.receive_from(asio::buffer(answer), from, 0, ec);
    if (ec) return std::nullopt;  // would block (or an ICMP error from an earlier hello): wait on
    const auto data_port =
        transport::decode_ack(std::span<const char>(answer.data(), n), to.who.token);
    if (!data_port || from.address() != to.address) continue;
    socket.connect(asio::ip::udp::endpoint(to.address, *data_port), ec);
    if (!ec) ec = udp.leave_reactor();
    if (ec) {
      s.close(id);
      return s.failure_from(ec, "udp connect");
    }
    s.find(id)->serial = s.next_serial(id, to.host->peer);
    s.worker_.count_connection(true);
    return OpOutcome{};
  }
}

}  // namespace

awaitable<OpOutcome> UdpOps::connect(StrandCore& s, const OpPlan& op, const profile::ConnectOp& c,
                                     ConnectTarget to) {
  s.worker_.count_connection(false);
  const std::uint32_t id = op.common.connection;
  const asio::ip::udp::endpoint listener(to.address, to.port);
  // Numbered once answered, as a TCP connect once connected: a hello that never got through
  // opened nothing on the peer's side (see ConnectionBytes::kOpenedSerial).
  s.connections_.push_back(
      StrandConnection{id, Link(asio::ip::udp::socket(s.worker_.context())), 0, to.host->peer});
  auto& socket = std::get<Link>(s.connections_.back().link).socket();
  if (OpOutcome opened = open_socket(s, socket, c, listener);
      opened.status != OpOutcome::Status::kOk) {
    s.close(id);
    co_return opened;
  }
  const auto hello = transport::encode(to.who);
  for (int attempt = 0; attempt < kHelloTries; ++attempt) {
    error_code ec;
    socket.send_to(asio::buffer(hello), listener, 0, ec);
    if (ec && ec != asio::error::would_block && ec != asio::error::connection_refused) {
      s.close(id);
      co_return s.failure_from(ec, fmt::format("udp connect to {}", to.address.to_string()));
    }
    for (const auto pause : kHelloPauses) {
      if (!co_await s.sleep_until(Clock::now() + pause, Waiting::kHello)) {
        s.close(id);
        co_return s.aborted_outcome();
      }
      if (auto answered = take_answer(s, id, to)) co_return std::move(*answered);
    }
  }
  s.close(id);
  co_return OpOutcome{
      OpOutcome::Status::kFailed, results::ErrorKind::kUnreachable,
      fmt::format("udp connect to {}: no answer to {} hellos",
                  core::format_host_port(to.address.to_string(), to.port), kHelloTries)};
}

Started UdpOps::write(StrandCore& s, const OpPlan& op, StrandConnection& c, std::uint64_t bytes,
                      std::optional<std::uint64_t> /*chunk*/) {
  return datagram(s, op, c, Direction::kWrite, bytes);
}

Started UdpOps::read(StrandCore& s, const OpPlan& op, StrandConnection& c, std::uint64_t bytes,
                     std::optional<std::uint64_t> /*chunk*/) {
  return datagram(s, op, c, Direction::kRead, bytes);
}

std::optional<OpOutcome> UdpOps::refused(StrandCore& s, Direction direction, std::uint64_t bytes) {
  const bool writing = direction == Direction::kWrite;
  const std::size_t room = s.worker_.buffer().size();
  if (writing &&
      (bytes < transport::kDatagramHeaderBytes || bytes > kMaxDatagramBytes || bytes > room)) {
    return OpOutcome{
        OpOutcome::Status::kFailed, results::ErrorKind::kOther,
        fmt::format("udp write: a datagram of {} bytes; volley's UDP datagrams are {} to {} bytes "
                    "(each carries a {}-byte header)",
                    bytes, transport::kDatagramHeaderBytes,
                    std::min<std::uint64_t>(kMaxDatagramBytes, room),
                    transport::kDatagramHeaderBytes)};
  }
  if (writing && s.worker_.engine().config().slave_side && s.worker_.ledger().txn_ended(s.txn_)) {
    return OpOutcome{OpOutcome::Status::kExpired, results::ErrorKind::kOther, {}};
  }
  return std::nullopt;
}

UdpOps::Try UdpOps::try_once(StrandCore& s, const OpPlan& op, StrandConnection& c,
                             Direction direction, std::uint64_t bytes, std::uint64_t* stamp_ns,
                             error_code& ec) {
  const bool writing = direction == Direction::kWrite;
  const std::span<char> buffer = s.worker_.buffer();
  auto& udp = std::get<Link>(c.link);
  const std::uint32_t token = s.worker_.engine().config().tokens().token_for(c.peer);
  for (;;) {
    transport::IoResult io;
    if (writing) {
      // The sequence number is taken only once the datagram is sent: a send that would block
      // is tried again with the same one.
      transport::encode(transport::DatagramHeader{token, op.common.connection, udp.peek_seq(),
                                                  stamp_ns != nullptr ? *stamp_ns : now_ns()},
                        buffer);
      io = udp.try_write(std::span<const char>(buffer.data(), static_cast<std::size_t>(bytes)));
    } else {
      io = udp.try_read(buffer.first(std::min<std::size_t>(buffer.size(), kMaxDatagramBytes)));
    }
    if (io.ec) {
      if (io.would_block()) return Try::kBlocked;
      ec = io.ec;
      return Try::kFailed;
    }
    s.worker_.count_progress();
    results::DatagramCounters& counts = s.worker_.slot(op.slot).counters.datagrams;
    if (writing) {
      udp.sent_one();
      ++counts.sent;
      s.add_written(op, io.bytes);
      return Try::kDone;
    }
    const auto header =
        transport::decode_datagram_header(std::span<const char>(buffer.data(), io.bytes));
    if (header && header->token == token) {
      const std::uint64_t arrived = now_ns();
      if (stamp_ns != nullptr) *stamp_ns = arrived;
      const transport::Arrival arrival = udp.receiver().arrive(*header, arrived);
      if (!arrival.duplicate) {
        ++counts.received;
        counts.lost += arrival.gap;
        counts.late += arrival.late ? 1U : 0U;
        counts.jitter_ns = std::max(counts.jitter_ns, udp.receiver().jitter_ns());
        s.add_read(op, io.bytes);
        return Try::kDone;
      }
      ++counts.duplicates;
    }
    // A duplicate, or not one of this run's datagrams (a late handshake answer): read on, or
    // give way to the worker's other strands first.
    if (s.worker_.over_budget()) return Try::kGiveWay;
  }
}

std::optional<OpOutcome> UdpOps::now(StrandCore& s, const OpPlan& op, StrandConnection& c,
                                     Direction direction, std::uint64_t bytes, bool& blocked) {
  error_code ec;
  const Try t = try_once(s, op, c, direction, bytes, nullptr, ec);
  blocked = t == Try::kBlocked;
  switch (t) {
    case Try::kDone: return OpOutcome{};
    case Try::kFailed: return s.failure_from(ec, name(direction));
    case Try::kBlocked:
    case Try::kGiveWay: break;
  }
  return std::nullopt;
}

Started UdpOps::datagram(StrandCore& s, const OpPlan& op, StrandConnection& c, Direction direction,
                         std::uint64_t bytes) {
  if (auto no = refused(s, direction, bytes)) return std::move(*no);
  bool blocked = false;
  if (auto end = now(s, op, c, direction, bytes, blocked)) return std::move(*end);
  return later(s, op, direction, bytes, blocked);
}

// The per-iteration path of the run loop (its checks, start's dispatch, the Started variant and
// the OpOutcome moves, a clock read for the header besides the one that ends the operation) cost
// more than the datagram itself; here an iteration is the datagram, its counts, one clock read
// and the two latency records. Nothing here suspends, so nothing (a cut, the worker's interval
// swap) can come between two iterations: the run loop's checks are the same few compares.
std::optional<Started> UdpOps::burst(StrandCore& s, const TxnPlan& txn, const OpPlan& op,
                                     StrandConnection& c, std::uint64_t& i, std::uint64_t limit,
                                     Clock::time_point& from, bool timing) {
  const auto* write = std::get_if<profile::WriteOp>(&op.spec);
  const profile::SizeSpec& size =
      write != nullptr ? write->size : std::get<profile::ReadOp>(op.spec).size;
  const Direction direction = write != nullptr ? Direction::kWrite : Direction::kRead;
  // A fixed size is refused for every datagram or for none: checked once, unless the slave's
  // writes must also see their step end (refused).
  const bool check_each = size.is_random() || (direction == Direction::kWrite &&
                                               s.worker_.engine().config().slave_side);
  if (!check_each) {
    if (auto no = refused(s, direction, size.min_bytes)) return Started(std::move(*no));
  }
  for (;;) {
    const std::uint64_t bytes = s.draw_size(op, size);
    if (check_each) {
      if (auto no = refused(s, direction, bytes)) return Started(std::move(*no));
    }
    // A write's send time is the clock read that began the operation (the last one's end, with
    // nothing but this loop's counting since): one clock read per datagram, not two.
    // Without latency recording the operations' ends are not read, so the header's is.
    std::uint64_t stamp =
        timing ? static_cast<std::uint64_t>(
                     std::chrono::duration_cast<std::chrono::nanoseconds>(from.time_since_epoch())
                         .count())
               : 0;
    error_code ec;
    switch (try_once(s, op, c, direction, bytes, timing ? &stamp : nullptr, ec)) {
      case Try::kDone: break;
      case Try::kBlocked: return Started(later(s, op, direction, bytes, true));
      case Try::kGiveWay: return Started(later(s, op, direction, bytes, false));
      case Try::kFailed: return Started(s.failure_from(ec, name(direction)));
    }
    // A read's end is its arrival time, read once the datagram was in.
    Clock::time_point done{};
    if (timing) {
      done = direction == Direction::kRead
                 ? Clock::time_point(
                       std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(stamp)))
                 : Clock::now();
    }
    // The run loop's counts for an operation that went and its iteration: the flowop and the
    // transaction count it, and both record the same interval (one clock read).
    results::SlotStats& op_stats = s.worker_.slot(op.slot);
    results::SlotStats& txn_stats = s.worker_.slot(txn.slot);
    ++op_stats.counters.ops;
    ++txn_stats.counters.ops;
    s.count_own_op();
    s.count_own_iteration();
    if (timing) {
      const auto ns = std::max<std::int64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(done - from).count(), 0);
      op_stats.latency.record(static_cast<std::uint64_t>(ns));
      txn_stats.latency.record(static_cast<std::uint64_t>(ns));
    }
    ++i;
    // The run loop's checks between two iterations; any that stops the burst is left to it.
    if (timing) s.last_end_ = done;
    if (i >= limit || s.worker_.over_budget() || s.cut_ != CutReason::kNone ||
        s.worker_.stopping()) {
      return std::nullopt;
    }
    // Without latency recording the clock is needed only for a deadline.
    if (timing) {
      from = done;
    } else if (s.deadline_) {
      from = Clock::now();
    }
    if (s.deadline_ && from >= *s.deadline_) return std::nullopt;
    s.last_end_.reset();
  }
}

awaitable<OpOutcome> UdpOps::later(StrandCore& s, const OpPlan& op, Direction direction,
                                   std::uint64_t bytes, bool blocked) {
  const bool writing = direction == Direction::kWrite;
  for (;;) {
    StrandConnection* c = s.find(op.common.connection);
    if (c == nullptr) co_return s.not_connected(op);
    if (blocked) {
      // wait_ready's steps, in this frame: a stream's receiver that keeps up waits every few
      // datagrams, and wait_ready's own frame was an allocation and a resumption per wait.
      error_code ec = asio::error::operation_aborted;
      // A cut that came while runnable (see wait_ready).
      if (const Waiting what = writing ? Waiting::kWrite : Waiting::kRead; s.may_wait(what, c)) {
        s.active_ = &c->link;
        s.worker_.budget_renewed();
        s.waits_for(what, c);
        std::tie(ec) = co_await std::get<Link>(c->link).wait(writing ? transport::Wait::kWritable
                                                                     : transport::Wait::kReadable);
        s.waits_for(Waiting::kNothing);
        s.active_ = nullptr;
      }
      if (ec) {
        if (!writing && s.cut_ == CutReason::kTimeout) {
          co_return OpOutcome{OpOutcome::Status::kLost, results::ErrorKind::kTimedOut, {}};
        }
        if (ec == asio::error::operation_aborted) co_return s.aborted_outcome();
        co_return s.failure_from(ec, name(direction));
      }
    } else {
      co_await s.worker_.yield();
      if (s.cut_short()) co_return s.aborted_outcome();
    }
    c = s.find(op.common.connection);
    if (c == nullptr) co_return s.not_connected(op);
    if (auto end = now(s, op, *c, direction, bytes, blocked)) co_return *end;
  }
}

}  // namespace volley::engine
