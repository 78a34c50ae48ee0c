#include "udp_ops.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <optional>
#include <string>
#include <tuple>

#include <boost/asio/ip/udp.hpp>
#include <fmt/format.h>

#include "source_address.hpp"
#include "step_ledger.hpp"
#include "strand_core.hpp"
#include "volley/core/host_port.hpp"
#include "volley/core/limits.hpp"
#include "volley/engine/random_stream.hpp"
#include "volley/transport/udp_batch.hpp"
#include "volley/transport/datagram.hpp"

namespace volley::engine {

namespace asio = boost::asio;
using asio::awaitable;
using boost::system::error_code;

namespace {

/// The largest UDP payload over IPv4.
constexpr std::uint64_t kMaxDatagramBytes = core::kMaxDatagramBytes;
/// The handshake: hello, then look for the answer after these pauses (about 200 ms in all),
/// then hello again, at most kHelloTries times (about 5 s, as a TCP connect's patience).
constexpr std::array<std::chrono::milliseconds, 6> kHelloPauses{
    std::chrono::milliseconds(1),  std::chrono::milliseconds(3),  std::chrono::milliseconds(8),
    std::chrono::milliseconds(20), std::chrono::milliseconds(50), std::chrono::milliseconds(118)};
constexpr int kHelloTries = 25;

std::uint64_t to_ns(std::chrono::steady_clock::time_point t) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

std::chrono::steady_clock::time_point from_ns(std::uint64_t ns) {
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::nanoseconds(ns)));
}

std::uint64_t now_ns() { return to_ns(std::chrono::steady_clock::now()); }

/// What a gso write says when the kernel refuses to cut its super-buffer.
std::string gso_refused(std::size_t segment) {
  return fmt::format(
      "udp write of {}-byte datagrams as super-buffers (gso): the kernel would not "
      "cut them; each, with its IP and UDP headers, must fit the path's MTU",
      segment);
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
  auto& link = std::get<Link>(s.connections_.back().link);
  auto& socket = link.socket();
  if (OpOutcome opened = open_socket(s, socket, c, listener);
      opened.status != OpOutcome::Status::kOk) {
    s.close(id);
    co_return opened;
  }
  if (c.connection.gso) {
    if (const error_code ec = link.use_gso()) {
      s.close(id);
      co_return s.failure_from(ec,
                               "udp connect: gso (UDP_SEGMENT and UDP_GRO, Linux 5.0 or later)");
    }
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

error_code UdpOps::accepted(Link& udp, const profile::ConnectionOptions& options) {
  return options.gso ? udp.use_gso() : error_code{};
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
    if (writing) {
      udp.sent_one();
      ++s.worker_.slot(op.slot).counters.datagrams.sent;
      s.add_written(op, io.bytes);
      return Try::kDone;
    }
    const std::uint64_t arrived = now_ns();
    if (stamp_ns != nullptr) *stamp_ns = arrived;
    const std::span<const char> datagram(buffer.data(), std::min(io.bytes, buffer.size()));
    if (arrive(s, op, udp, token, datagram, io.bytes, arrived)) return Try::kDone;
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
// more than the datagram itself, and so did a system call per datagram: here an iteration is its
// datagram's share of a batch, its counts, and a share of the batch's one clock read. Nothing
// here suspends, so nothing (a cut, the worker's interval swap) can come between two batches: the
// run loop's checks are the same few compares, once a batch.
std::optional<Started> UdpOps::burst(StrandCore& s, const TxnPlan& txn, const OpPlan& op,
                                     StrandConnection& c, std::uint64_t& i, std::uint64_t limit,
                                     Clock::time_point& from, bool timing) {
  Burst b{s, txn, op, c, i, limit, from, timing};
  if (std::holds_alternative<profile::WriteOp>(op.spec)) return burst_writes(b);
  return burst_reads(b);
}

std::optional<Started> UdpOps::burst_writes(Burst& b) {
  StrandCore& s = b.s;
  const OpPlan& op = b.op;
  const profile::SizeSpec& size = std::get<profile::WriteOp>(op.spec).size;
  const bool random = size.is_random();
  // A fixed size is refused for every datagram or for none; a slave's writes also stop at their
  // step's end (refused), which is looked at once a batch.
  const bool slave = s.worker_.engine().config().slave_side;
  if (!random && !slave) {
    if (auto no = refused(s, Direction::kWrite, size.min_bytes)) return Started(std::move(*no));
  }
  auto& udp = std::get<Link>(b.c.link);
  // With gso, datagrams of one size go as super-buffers the kernel cuts (the profile refuses gso
  // with random sizes).
  const std::size_t segment = udp.gso() && !random ? size.min_bytes : 0;
  transport::SendBatch batch;
  for (;;) {
    if (!random && slave) {
      if (auto no = refused(s, Direction::kWrite, size.min_bytes)) return Started(std::move(*no));
    }
    batch.clear(segment);
    if (auto no = fill_batch(b, batch)) return Started(std::move(*no));
    const transport::IoResult r = udp.try_write_batch(batch);
    if (r.ec) {
      const std::uint64_t bytes = s.draw_size(op, size);  // the first datagram's, drawn above
      if (r.would_block()) return Started(later(s, op, Direction::kWrite, bytes, true));
      // The kernel says EMSGSIZE (EINVAL before Linux 5.x) when the path cannot carry a segment.
      const bool too_big = r.ec.value() == EMSGSIZE || r.ec.value() == EINVAL;
      return Started(s.failure_from(r.ec, segment != 0 && too_big
                                              ? gso_refused(segment)
                                              : std::string(name(Direction::kWrite))));
    }
    const std::uint64_t m = r.bytes;
    for (std::uint64_t k = 0; random && k < m; ++k) s.draw_size(op, size);
    udp.sent(m);
    s.worker_.count_progress();
    s.worker_.slot(op.slot).counters.datagrams.sent += m;
    s.add_written(op, batch.bytes_of_first(static_cast<std::size_t>(m)));
    const Clock::time_point done = b.timing ? Clock::now() : Clock::time_point{};
    count_batch(b, m, done);
    if (!go_on(b, m, done)) return std::nullopt;
  }
}

std::optional<OpOutcome> UdpOps::fill_batch(Burst& b, transport::SendBatch& batch) {
  StrandCore& s = b.s;
  const OpPlan& op = b.op;
  const profile::SizeSpec& size = std::get<profile::WriteOp>(op.spec).size;
  const bool random = size.is_random();
  const auto& udp = std::get<Link>(b.c.link);
  const std::uint32_t token = s.worker_.engine().config().tokens().token_for(b.c.peer);
  const std::span<char> buffer = s.worker_.buffer();
  std::uint64_t n = std::min(batch.room(), b.limit - b.i);
  // No more than the buffer holds; with gso, whole super-buffers of them.
  if (const std::uint64_t fit = buffer.size() / size.max_bytes; fit < n) {
    const std::uint64_t per = transport::segments_per_super(udp.gso() ? size.min_bytes : 0);
    n = fit - fit % per;
  }
  // Every header of the batch carries its start: the clock read that began it (see burst()).
  const std::uint64_t stamp = b.timing ? to_ns(b.from) : now_ns();
  // Sizes are drawn from a copy of the stream: the stream itself moves on by the datagrams that
  // went, so that one this call does not take is drawn again for the next.
  std::optional<RandomStream> ahead;
  if (random) ahead = s.stream(op.common.connection);
  std::size_t at = 0;
  for (std::uint64_t k = 0; k < n; ++k) {
    const std::uint64_t bytes =
        random ? ahead->between(size.min_bytes, size.max_bytes) : size.min_bytes;
    if (random) {
      if (auto no = refused(s, Direction::kWrite, bytes)) {
        if (k == 0) return no;
        break;  // the ones before it first; the next batch begins with it, and ends there
      }
    }
    const std::span<char> datagram = buffer.subspan(at, static_cast<std::size_t>(bytes));
    transport::encode(
        transport::DatagramHeader{token, op.common.connection, udp.peek_seq() + k, stamp},
        datagram);
    batch.add(datagram);
    at += datagram.size();
  }
  return std::nullopt;
}

std::optional<Started> UdpOps::burst_reads(Burst& b) {
  StrandCore& s = b.s;
  const OpPlan& op = b.op;
  const profile::SizeSpec& size = std::get<profile::ReadOp>(op.spec).size;
  auto& udp = std::get<Link>(b.c.link);
  const std::span<char> buffer = s.worker_.buffer();
  const std::uint32_t token = s.worker_.engine().config().tokens().token_for(b.c.peer);
  // A slot holds the largest datagram the flowop expects (a longer one is cut to it, and counted
  // at its length), or with gso a whole super-buffer.
  const std::size_t slot =
      udp.gso() ? transport::ReceiveBatch::kSuperSlotBytes
                : static_cast<std::size_t>(std::clamp<std::uint64_t>(
                      size.max_bytes, transport::kDatagramHeaderBytes, kMaxDatagramBytes));
  transport::ReceiveBatch batch;
  results::DatagramCounters& counts = s.worker_.slot(op.slot).counters.datagrams;
  for (;;) {
    std::uint64_t m = 0;
    std::uint64_t arrived = 0;
    const std::uint64_t lost_before = counts.lost;
    std::uint64_t arrivals = 0;  // what the kernel queued: datagrams, or super-buffers
    std::uint64_t datagrams = 0;
    std::uint64_t arrived_bytes = 0;
    if (udp.holds()) {  // taken ahead by an earlier read (the rest of a super-buffer)
      arrived = now_ns();
      while (udp.holds() && b.i + m < b.limit) {
        const transport::UdpConnection::Held held = udp.take_held();
        if (arrive(s, op, udp, token, held.header, held.length, arrived)) ++m;
      }
    } else {
      const transport::IoResult r = udp.try_read_batch(
          batch, buffer, slot, std::min(transport::ReceiveBatch::kMostMessages, b.limit - b.i));
      if (r.ec) {
        const std::uint64_t bytes = s.draw_size(op, size);
        if (r.would_block()) {
          const Clock::duration pause =
              udp.pace().drained(Clock::now(), udp.receive_buffer_bytes());
          return Started(later(s, op, Direction::kRead, bytes, true, pause));
        }
        return Started(s.failure_from(r.ec, name(Direction::kRead)));
      }
      // Every datagram of the batch arrived when the call returned: one clock read for all.
      arrived = now_ns();
      arrivals = batch.messages();
      for (std::size_t msg = 0; msg < batch.messages(); ++msg) {
        for (std::size_t d = 0; d < batch.datagrams_in(msg); ++d) {
          const auto datagram = batch.datagram(msg, d);
          arrived_bytes += datagram.length;
          ++datagrams;
          if (b.i + m < b.limit) {
            if (arrive(s, op, udp, token, datagram.data, datagram.length, arrived)) ++m;
          } else {
            udp.hold(datagram.data, datagram.length);  // a super-buffer past the step's end
          }
        }
      }
    }
    s.worker_.count_progress();
    udp.pace().took(arrivals, datagrams, arrived_bytes, counts.lost - lost_before);
    // Only duplicates, or datagrams of no run of ours: the run loop reads on, one at a time.
    if (m == 0) return std::nullopt;
    for (std::uint64_t k = 0; size.is_random() && k < m; ++k) s.draw_size(op, size);
    // A read ends as its datagram is in.
    const Clock::time_point done = b.timing ? from_ns(arrived) : Clock::time_point{};
    count_batch(b, m, done);
    if (!go_on(b, m, done)) return std::nullopt;
  }
}

void UdpOps::count_batch(const Burst& b, std::uint64_t m, Clock::time_point done) {
  // The run loop's counts for an operation that went and its iteration: the flowop and the
  // transaction count it, and both record the same interval.
  results::SlotStats& op_stats = b.s.worker_.slot(b.op.slot);
  results::SlotStats& txn_stats = b.s.worker_.slot(b.txn.slot);
  op_stats.counters.ops += m;
  txn_stats.counters.ops += m;
  for (std::uint64_t k = 0; k < m; ++k) {
    b.s.count_own_op();
    b.s.count_own_iteration();
  }
  if (!b.timing) return;
  // The batch's operations ended together: each is recorded as its share of the time since the
  // last batch ended (the first `rest` of them a nanosecond more), so that they add up to it.
  const auto total = static_cast<std::uint64_t>(std::max<std::int64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(done - b.from).count(), 0));
  const std::uint64_t share = total / m;
  const std::uint64_t rest = total % m;
  for (stats::LatencyHistogram* h : {&op_stats.latency, &txn_stats.latency}) {
    h->record_n(share + 1, rest);
    h->record_n(share, m - rest);
  }
}

bool UdpOps::go_on(Burst& b, std::uint64_t m, Clock::time_point done) {
  StrandCore& s = b.s;
  b.i += m;
  // The run loop's checks between two iterations; any that stops the burst is left to it.
  if (b.timing) s.last_end_ = done;
  if (b.i >= b.limit || s.worker_.over_budget(static_cast<std::uint32_t>(m)) ||
      s.cut_ != CutReason::kNone || s.worker_.stopping()) {
    return false;
  }
  // Without latency recording the clock is needed only for a deadline.
  if (b.timing) {
    b.from = done;
  } else if (s.deadline_) {
    b.from = Clock::now();
  }
  if (s.deadline_ && b.from >= *s.deadline_) return false;
  s.last_end_.reset();
  return true;
}

bool UdpOps::arrive(StrandCore& s, const OpPlan& op, Link& udp, std::uint32_t token,
                    std::span<const char> datagram, std::size_t length, std::uint64_t arrived_ns) {
  const auto header = transport::decode_datagram_header(datagram);
  if (!header || header->token != token) return false;  // e.g. a late handshake answer
  results::DatagramCounters& counts = s.worker_.slot(op.slot).counters.datagrams;
  const transport::Arrival arrival = udp.receiver().arrive(*header, arrived_ns);
  if (arrival.duplicate) {
    ++counts.duplicates;
    return false;
  }
  ++counts.received;
  counts.lost += arrival.gap;
  counts.late += arrival.late ? 1U : 0U;
  counts.jitter_ns = std::max(counts.jitter_ns, udp.receiver().jitter_ns());
  s.add_read(op, length);
  return true;
}

awaitable<OpOutcome> UdpOps::later(StrandCore& s, const OpPlan& op, Direction direction,
                                   std::uint64_t bytes, bool blocked, Clock::duration pause) {
  const bool writing = direction == Direction::kWrite;
  if (pause > Clock::duration::zero()) {
    // A stream's reader that drained its socket sleeps out of epoll (see UdpReadPace); a cut
    // cancels the timer, and the read goes on as any other.
    if (StrandConnection* c = s.find(op.common.connection); c != nullptr) {
      if (s.may_wait(Waiting::kRead, c)) {
        s.worker_.budget_renewed();
        s.waits_for(Waiting::kRead, c);
        s.timer_.expires_after(pause);
        co_await s.timer_.async_wait(asio::as_tuple(asio::use_awaitable));
        s.waits_for(Waiting::kNothing);
      }
      c = s.find(op.common.connection);
      if (c == nullptr) co_return s.not_connected(op);
      if (auto end = now(s, op, *c, direction, bytes, blocked)) co_return *end;
      // Nothing came: the stream stopped or slowed. Wait in epoll for what comes next.
      if (blocked) std::get<Link>(c->link).pace().idle();
    }
  }
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
