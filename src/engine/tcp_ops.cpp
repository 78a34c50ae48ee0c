#include "tcp_ops.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include <boost/asio/write.hpp>
#include <fmt/format.h>

#include "read_successor.hpp"
#include "source_address.hpp"
#include "strand_core.hpp"
#include "volley/transport/closed_at_header.hpp"
#include "volley/transport/socket_options.hpp"
#include "volley/transport/tcp_info.hpp"
#include "zero_copy_write.hpp"

namespace volley::engine {

namespace asio = boost::asio;
using asio::awaitable;
using boost::system::error_code;

namespace {

/// A stream read that must wait for at least this many bytes asks the kernel to wake it only when
/// they are there (or kMaxWakeAfter of them), not at each arrival: see TcpOps::expect. Below it
/// (a ping-pong's messages) the mark stays at 1 and costs no system call.
constexpr std::uint64_t kWakeFrom = StreamOps::kLargeMessage;

/// Waits for one of the worker's connect slots when none was free (see ConnectGate); false when
/// cut first.
awaitable<bool> wait_gate(StrandCore& s, ConnectGate& gate) {
  bool granted = false;
  gate.queue(s.timer_, granted);
  // The gate sets `granted` through the reference it keeps while this coroutine waits.
  while (!granted) {  // NOLINT(bugprone-infinite-loop)
    if (!s.may_wait(Waiting::kConnect)) {
      gate.forget(s.timer_);
      co_return false;
    }
    s.timer_.expires_at(StrandCore::Clock::time_point::max());
    s.worker_.budget_renewed();
    s.waits_for(Waiting::kConnect);
    co_await s.timer_.async_wait(transport::kWaitToken);
    s.waits_for(Waiting::kNothing);
  }
  if (!s.may_wait(Waiting::kConnect)) {  // granted and cut together: pass the slot on
    gate.leave();
    co_return false;
  }
  co_return true;
}

/// Writes what the send buffer takes now of the connection header `header` on a connection just
/// connected: a fresh connection's send buffer takes its 20 bytes at once, written in place,
/// without an asynchronous write's operation (memory held by every connection in a connect
/// storm). Returns how many bytes went.
std::size_t header_now(TcpOps::Link::Socket& socket, asio::const_buffer header, error_code& ec) {
  std::size_t sent = 0;
  socket.non_blocking(true, ec);
  if (!ec) sent = socket.write_some(header, ec);
  if (ec == asio::error::would_block) ec = {};
  return sent;
}

}  // namespace

Started TcpOps::write(StrandCore& s, const OpPlan& op, StrandConnection& c, std::uint64_t bytes,
                      std::optional<std::uint64_t> chunk) {
  if (op.zerocopy) return ZeroCopyWrite::write(s, op, c, bytes, chunk);
  return StreamOps::write(s, op, c, bytes, chunk);
}

void TcpOps::closing(StrandCore& s, Link& tcp) { ZeroCopyWrite::collect(s, tcp); }

awaitable<OpOutcome> TcpOps::connect(StrandCore& s, const OpPlan& op, const profile::ConnectOp& c,
                                     ConnectTarget to) {
  // A slot of the worker's connects in flight (see ConnectGate), held until the header is out.
  ConnectGate& gate = s.worker_.connect_gate();
  if (!gate.try_enter()) {
    const bool entered = co_await wait_gate(s, gate);
    if (!entered) co_return s.aborted_outcome();
  }
  const std::uint32_t id = op.common.connection;
  const asio::ip::tcp::endpoint endpoint(to.address, to.port);
  s.worker_.count_connection(false);
  s.connections_.push_back(StrandConnection{id, Link(Link::Socket(s.worker_.context()))});
  Link& tcp = std::get<Link>(s.connections_.back().link);
  Link::Socket& socket = tcp.socket();
  error_code ec = tcp.open(endpoint.protocol());
  if (!ec) ec = transport::apply_options(socket, c.connection);
  const std::string* source = nullptr;
  if (!ec) source = bind_source(socket, c.connection.source_addresses, s.index_, to.address, ec);
  if (ec) {
    gate.leave();
    s.close(id);
    co_return s.failure_from(
        ec, source == nullptr ? std::string("socket") : bind_source_context(*source, to.address));
  }
  if (!s.may_wait(Waiting::kConnect)) {  // see wait_ready
    gate.leave();
    s.close(id);
    co_return s.aborted_outcome();
  }
  s.active_ = &s.connections_.back().link;
  s.worker_.budget_renewed();
  s.waits_for(Waiting::kConnect);
  auto [connect_ec] = co_await socket.async_connect(endpoint, transport::kWaitToken);
  const bool connected = !connect_ec;
  if (connected) {
    const auto header = transport::encode(to.who);
    const std::size_t sent = header_now(socket, asio::buffer(header), connect_ec);
    if (!connect_ec && sent < header.size()) {
      auto [header_ec, n] =
          co_await asio::async_write(socket, asio::buffer(header) + sent, transport::kWaitToken);
      connect_ec = header_ec;
    }
  }
  gate.leave();
  s.active_ = nullptr;
  s.waits_for(Waiting::kNothing);
  if (connect_ec) {
    if (connect_ec == asio::error::operation_aborted) {
      s.close(id);
      co_return s.aborted_outcome();
    }
    OpOutcome out =
        s.failure_from(connect_ec, fmt::format("connect to {}", to.address.to_string()));
    if (connected) s.refused_at_header(op, out);  // the header's write failed: before close()
    s.close(id);
    co_return out;
  }
  socket.non_blocking(true, ec);
  if (!ec && c.connection.protocol == profile::Protocol::kTcp) {
    ec = move_to_ring(s.worker_, s.connections_.back().link);
  }
  if (ec) {
    OpOutcome out = s.failure_from(ec, "connected socket");
    s.close(id);
    co_return out;
  }
  // Numbered only once connected: a connect that failed opened nothing on the peer's side.
  s.connections_.back().serial = s.next_serial(id, to.host->peer);
  s.connections_.back().peer = to.host->peer;
  s.worker_.count_connection(true);
  s.worker_.count_connected(to.host, to.port);
  co_return OpOutcome{};
}

error_code TcpOps::accepted(Link& tcp, const profile::ConnectionOptions& options) {
  error_code ec = transport::apply_options(tcp.socket(), options);
  if (!ec) tcp.socket().non_blocking(true, ec);
  return ec;
}

void TcpOps::adopted(Link& tcp) {
  error_code ignored;
  tcp.socket().non_blocking(true, ignored);
}

void TcpOps::before_read(Link& tcp, const PendingRead& r) { tcp.count_reads(r.bytes >= kWakeFrom); }

std::optional<OpOutcome> TcpOps::read_now(StrandCore& s, PendingRead& r, Link& tcp) {
  if (tcp.known_drained()) return std::nullopt;
  // A cut is seen by read_begin (see wait_ready); after the peer's end of the step, read_begin
  // decides whether the read goes on.
  while (s.cut_ == CutReason::kNone) {
    // As read_begin asks: a short read tells the reactor the socket drained.
    const transport::IoResult io = tcp.read_now(ask(s.worker_.buffer(), r));
    if (io.would_block()) return std::nullopt;
    if (auto end = read_end(s, r, io.ec, io.bytes)) return end;
    if (s.worker_.over_budget()) return std::nullopt;  // give way: the rest through the event loop
  }
  return std::nullopt;
}

void TcpOps::expect(Link& tcp, std::uint64_t bytes) {
  tcp.wake_after(bytes >= kWakeFrom
                     ? static_cast<std::size_t>(std::min<std::uint64_t>(bytes, Link::kMaxWakeAfter))
                     : 1);
}

void TcpOps::resumed(StrandCore& s, StrandConnection& c, Link& tcp, const void* frame,
                     const transport::IoDone& got) {
  prefetch_successor(s, c, tcp.reactor_state(), frame, got);
}

void TcpOps::sample(Link& tcp, stats::TcpSummary& into) {
  if (const auto reading = transport::read_tcp_info(tcp.socket().native_handle())) {
    into.add(*reading);
  }
}

bool TcpOps::closed_at_header(Link& tcp) {
  return transport::closed_at_header(tcp.socket().native_handle());
}

}  // namespace volley::engine
