#include "uring_tcp_ops.hpp"

#include <algorithm>

#include "volley/transport/closed_at_header.hpp"
#include "volley/transport/tcp_info.hpp"
#include "volley/transport/tcp_connection.hpp"
#include "protocols.hpp"
#include "read_successor.hpp"
#include "worker.hpp"

namespace volley::engine {

void UringTcpOps::expect(Link& tcp, std::uint64_t bytes) {
  tcp.wake_after(bytes >= kLargeMessage ? static_cast<std::size_t>(std::min<std::uint64_t>(
                                              bytes, transport::kMaxWakeAfter))
                                        : 1);
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
