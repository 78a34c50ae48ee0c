#include "uring_tcp_ops.hpp"

#include <algorithm>

#include "volley/transport/closed_at_header.hpp"
#include "volley/transport/tcp_info.hpp"
#include "volley/transport/tcp_connection.hpp"
#include "protocols.hpp"
#include "strand_core.hpp"
#include "read_successor.hpp"
#include "worker.hpp"

namespace volley::engine {

void UringTcpOps::expect(Link& tcp, std::uint64_t bytes) {
  if (bytes >= kLargeMessage) {
    tcp.wake_after(
        static_cast<std::size_t>(std::min<std::uint64_t>(bytes, transport::kMaxWakeAfter)));
    return;
  }
  tcp.wake_after(1);
  tcp.keep_receiving();
}

std::optional<OpOutcome> UringTcpOps::read_now(StrandCore& s, PendingRead& r, Link& tcp) {
  // (A cut is seen by read_begin, as on TcpOps::read_now.)
  if (!tcp.holds_arrivals() || s.cut_ != CutReason::kNone) return std::nullopt;
  const transport::IoResult got = tcp.try_read(ask(s.worker_.buffer(), r));
  return read_end(s, r, got.ec, got.bytes);
}

void UringTcpOps::resumed(StrandCore& s, StrandConnection& c, Link& /*tcp*/, const void* frame,
                          const transport::IoDone& got) {
  prefetch_successor(s, c, nullptr, frame, got);
}

void UringTcpOps::sample(Link& tcp, stats::TcpSummary& into) {
  if (const auto reading = transport::read_tcp_info(tcp.native_handle())) into.add(*reading);
}

bool UringTcpOps::closed_at_header(Link& tcp) {
  return transport::closed_at_header(tcp.native_handle());
}

boost::system::error_code move_to_ring(Worker& w, AnyConnection& link) {
  transport::Ring* ring = w.ring();
  auto* tcp = std::get_if<transport::TcpConnection>(&link);
  if (ring == nullptr || tcp == nullptr || w.plan().zerocopy) return {};
  transport::UringTcpConnection moved;
  if (auto ec = transport::UringTcpConnection::adopt(*tcp, *ring, moved)) return ec;
  link.emplace<transport::UringTcpConnection>(std::move(moved));
  return {};
}

}  // namespace volley::engine
