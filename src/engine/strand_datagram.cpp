// The strand's UDP operations: the connection handshake, and one datagram per write or read,
// with the header that lets the receiving side count loss, reordering, duplicates and jitter.
// UDP bytes never count in a connection's step_written/step_read: the end-of-step drain does not
// wait for datagrams, which may be lost; the receiver's counts say what arrived.
#include <algorithm>
#include <array>
#include <chrono>
#include <tuple>

#include <boost/asio/ip/udp.hpp>
#include <fmt/format.h>

#include "source_address.hpp"
#include "strand.hpp"
#include "volley/core/host_port.hpp"
#include "volley/transport/datagram.hpp"

namespace volley::engine {

namespace asio = boost::asio;
using asio::awaitable;
using boost::system::error_code;

namespace {

/// The largest UDP payload over IPv4.
constexpr std::uint64_t kMaxDatagramBytes = 65507;
/// A UDP read with no timeout= waits this long for a datagram, then counts a timeout and goes
/// on: a lost datagram must not stall a run (docs/uperf-compatibility.md).
constexpr auto kDefaultUdpReadTimeout = std::chrono::milliseconds(500);
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

}  // namespace

std::optional<std::chrono::nanoseconds> Strand::udp_read_timeout(const OpPlan& op) {
  if (!std::holds_alternative<profile::ReadOp>(op.spec)) return std::nullopt;
  Connection* c = find(op.common.connection);
  if (c == nullptr || !std::holds_alternative<transport::UdpConnection>(c->link)) {
    return std::nullopt;
  }
  return kDefaultUdpReadTimeout;
}

awaitable<OpOutcome> Strand::connect_udp(const OpPlan& op, const profile::ConnectOp& c,
                                         const asio::ip::address& address, std::uint16_t port,
                                         const transport::ConnectionHeader& who,
                                         std::uint32_t peer) {
  worker_.count_connection(false);
  const std::uint32_t id = op.common.connection;
  const asio::ip::udp::endpoint listener(address, port);
  // Numbered once answered, as a TCP connect once connected: a hello that never got through
  // opened nothing on the peer's side (see ConnectionBytes::kOpenedSerial).
  connections_.push_back(Connection{
      id, transport::UdpConnection(asio::ip::udp::socket(worker_.context())), 0, peer});
  auto& socket = std::get<transport::UdpConnection>(connections_.back().link).socket();
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
  if (!ec) source = bind_source(socket, c.connection.source_addresses, index_, address, ec);
  if (ec) {
    close(id);
    co_return failure_from(
        ec, source == nullptr ? std::string("udp socket") : bind_source_context(*source, address));
  }
  const auto hello = transport::encode(who);
  const std::uint32_t token = who.token;
  std::array<char, 64> answer{};
  for (int attempt = 0; attempt < kHelloTries; ++attempt) {
    socket.send_to(asio::buffer(hello), listener, 0, ec);
    if (ec && ec != asio::error::would_block && ec != asio::error::connection_refused) {
      close(id);
      co_return failure_from(ec, fmt::format("udp connect to {}", address.to_string()));
    }
    for (const auto pause : kHelloPauses) {
      if (!co_await sleep_until(Clock::now() + pause, Waiting::kHello)) {
        close(id);
        co_return aborted_outcome();
      }
      // The socket is still this strand's newest with this id: nothing else ran on this strand.
      auto& s = std::get<transport::UdpConnection>(find(id)->link).socket();
      for (;;) {
        asio::ip::udp::endpoint from;
        const std::size_t n = s.receive_from(asio::buffer(answer), from, 0, ec);
        if (ec) break;  // would block (or an ICMP error from an earlier hello): wait on
        const auto data_port = transport::decode_ack(std::span<const char>(answer.data(), n), token);
        if (!data_port || from.address() != address) continue;
        s.connect(asio::ip::udp::endpoint(address, *data_port), ec);
        if (!ec) ec = std::get<transport::UdpConnection>(find(id)->link).leave_reactor();
        if (ec) {
          close(id);
          co_return failure_from(ec, "udp connect");
        }
        find(id)->serial = next_serial(id, peer);
        worker_.count_connection(true);
        co_return OpOutcome{};
      }
    }
  }
  close(id);
  co_return OpOutcome{OpOutcome::Status::kFailed, results::ErrorKind::kUnreachable,
                      fmt::format("udp connect to {}: no answer to {} hellos",
                                  core::format_host_port(address.to_string(), port), kHelloTries)};
}

std::optional<OpOutcome> Strand::datagram_refused(Direction direction, std::uint64_t bytes) {
  const bool writing = direction == Direction::kWrite;
  const std::size_t room = worker_.buffer().size();
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
  if (writing && worker_.engine().config().slave_side && worker_.engine().txn_ended(txn_)) {
    return OpOutcome{OpOutcome::Status::kExpired, results::ErrorKind::kOther, {}};
  }
  return std::nullopt;
}

Strand::DatagramTry Strand::datagram_try(const OpPlan& op, Connection& c, Direction direction,
                                         std::uint64_t bytes, std::uint64_t* stamp_ns,
                                         error_code& ec) {
  const bool writing = direction == Direction::kWrite;
  const std::span<char> buffer = worker_.buffer();
  auto& udp = std::get<transport::UdpConnection>(c.link);
  const std::uint32_t token = worker_.engine().config().tokens().token_for(c.peer);
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
      if (io.would_block()) return DatagramTry::kBlocked;
      ec = io.ec;
      return DatagramTry::kFailed;
    }
    worker_.count_progress();
    results::DatagramCounters& counts = worker_.slot(op.slot).counters.datagrams;
    if (writing) {
      udp.sent_one();
      ++counts.sent;
      add_written(op, io.bytes);
      return DatagramTry::kDone;
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
        add_read(op, io.bytes);
        return DatagramTry::kDone;
      }
      ++counts.duplicates;
    }
    // A duplicate, or not one of this run's datagrams (a late handshake answer): read on, or
    // give way to the worker's other strands first.
    if (worker_.over_budget()) return DatagramTry::kGiveWay;
  }
}

std::optional<OpOutcome> Strand::datagram_now(const OpPlan& op, Connection& c,
                                              Direction direction, std::uint64_t bytes,
                                              bool& blocked) {
  error_code ec;
  const DatagramTry t =
      datagram_try(op, c, direction, bytes, nullptr, ec);
  blocked = t == DatagramTry::kBlocked;
  switch (t) {
    case DatagramTry::kDone:
      return OpOutcome{};
    case DatagramTry::kFailed:
      return failure_from(ec, direction == Direction::kWrite ? "udp write" : "udp read");
    case DatagramTry::kBlocked:
    case DatagramTry::kGiveWay:
      break;
  }
  return std::nullopt;
}

Strand::Started Strand::datagram(const OpPlan& op, Connection& c, Direction direction,
                                 std::uint64_t bytes) {
  if (auto refused = datagram_refused(direction, bytes)) return std::move(*refused);
  bool blocked = false;
  if (auto end = datagram_now(op, c, direction, bytes, blocked)) return std::move(*end);
  return datagram_later(op, direction, bytes, blocked);
}

const OpPlan* Strand::datagram_stream_op(const TxnPlan& txn) {
  if (txn.rate_per_s || txn.ops.size() != 1) return nullptr;
  const OpPlan& op = txn.ops.front();
  const bool moves = std::holds_alternative<profile::WriteOp>(op.spec) ||
                     std::holds_alternative<profile::ReadOp>(op.spec);
  if (!moves || op.common.count != 1 || needs_timer(op)) return nullptr;
  Connection* c = find(op.common.connection);
  if (c == nullptr || !std::holds_alternative<transport::UdpConnection>(c->link)) return nullptr;
  return &op;
}

// The per-iteration path of run_txn (its checks, start's dispatch, the Started variant and the
// OpOutcome moves, a clock read for the header besides the one that ends the operation) cost
// more than the datagram itself; here an iteration is the datagram, its counts, one clock read
// and the two latency records. Nothing here suspends, so nothing (a cut, the worker's interval
// swap) can come between two iterations: the run loop's checks are the same few compares.
std::optional<Strand::Started> Strand::datagram_stream(const TxnPlan& txn, const OpPlan& op,
                                                       std::uint64_t& i, std::uint64_t limit,
                                                       Clock::time_point& from, bool timing) {
  Connection* c = find(op.common.connection);
  if (c == nullptr || !std::holds_alternative<transport::UdpConnection>(c->link)) {
    return std::nullopt;
  }
  const auto* write = std::get_if<profile::WriteOp>(&op.spec);
  const profile::SizeSpec& size = write != nullptr ? write->size
                                                   : std::get<profile::ReadOp>(op.spec).size;
  const Direction direction = write != nullptr ? Direction::kWrite : Direction::kRead;
  // A fixed size is refused for every datagram or for none: checked once, unless the slave's
  // writes must also see their step end (datagram_refused).
  const bool check_each = size.is_random() || (direction == Direction::kWrite &&
                                               worker_.engine().config().slave_side);
  if (!check_each) {
    if (auto refused = datagram_refused(direction, size.min_bytes)) {
      return Started(std::move(*refused));
    }
  }
  for (;;) {
    const std::uint64_t bytes = draw_size(op, size);
    if (check_each) {
      if (auto refused = datagram_refused(direction, bytes)) return Started(std::move(*refused));
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
    switch (datagram_try(op, *c, direction, bytes, timing ? &stamp : nullptr, ec)) {
      case DatagramTry::kDone:
        break;
      case DatagramTry::kBlocked:
        return Started(datagram_later(op, direction, bytes, true));
      case DatagramTry::kGiveWay:
        return Started(datagram_later(op, direction, bytes, false));
      case DatagramTry::kFailed:
        return Started(
            failure_from(ec, direction == Direction::kWrite ? "udp write" : "udp read"));
    }
    // A read's end is its arrival time, read once the datagram was in.
    Clock::time_point done{};
    if (timing) {
      done = direction == Direction::kRead
                 ? Clock::time_point(std::chrono::duration_cast<Clock::duration>(
                       std::chrono::nanoseconds(stamp)))
                 : Clock::now();
    }
    // account_op and account_iteration for an operation that went: the flowop and the
    // transaction count it, and both record the same interval (one clock read).
    results::SlotStats& op_stats = worker_.slot(op.slot);
    results::SlotStats& txn_stats = worker_.slot(txn.slot);
    ++op_stats.counters.ops;
    ++txn_stats.counters.ops;
    if (timing) {
      const auto ns = std::max<std::int64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(done - from).count(), 0);
      op_stats.latency.record(static_cast<std::uint64_t>(ns));
      txn_stats.latency.record(static_cast<std::uint64_t>(ns));
    }
    ++i;
    // The run loop's checks between two iterations; any that stops the stream is left to it.
    if (timing) last_end_ = done;
    if (i >= limit || worker_.over_budget() || cut_ != CutReason::kNone || worker_.stopping()) {
      return std::nullopt;
    }
    // Without latency recording the clock is needed only for a deadline.
    if (timing) {
      from = done;
    } else if (deadline_) {
      from = Clock::now();
    }
    if (deadline_ && from >= *deadline_) return std::nullopt;
    last_end_.reset();
  }
}

awaitable<OpOutcome> Strand::datagram_later(const OpPlan& op, Direction direction,
                                            std::uint64_t bytes, bool blocked) {
  const bool writing = direction == Direction::kWrite;
  for (;;) {
    Connection* c = find(op.common.connection);
    if (c == nullptr) co_return not_connected(op);
    if (blocked) {
      // wait_ready's steps, in this frame: a stream's receiver that keeps up waits every few
      // datagrams, and wait_ready's own frame was an allocation and a resumption per wait.
      error_code ec = asio::error::operation_aborted;
      // A cut that came while runnable (see wait_ready).
      if (const Waiting what = writing ? Waiting::kWrite : Waiting::kRead; may_wait(what, c)) {
        active_ = &c->link;
        worker_.budget_renewed();
        waits_for(what, c);
        std::tie(ec) = co_await std::get<transport::UdpConnection>(c->link).wait(
            writing ? transport::Wait::kWritable : transport::Wait::kReadable);
        waits_for(Waiting::kNothing);
        active_ = nullptr;
      }
      if (ec) {
        if (!writing && cut_ == CutReason::kTimeout) {
          co_return OpOutcome{OpOutcome::Status::kLost, results::ErrorKind::kTimedOut, {}};
        }
        if (ec == asio::error::operation_aborted) co_return aborted_outcome();
        co_return failure_from(ec, writing ? "udp write" : "udp read");
      }
    } else {
      co_await worker_.yield();
      if (cut_short()) co_return aborted_outcome();
    }
    c = find(op.common.connection);
    if (c == nullptr) co_return not_connected(op);
    if (auto end = datagram_now(op, *c, direction, bytes, blocked)) co_return *end;
  }
}

}  // namespace volley::engine
