#pragma once
// The executor of TCP connections on the io_uring engine (--io uring): the byte stream's reads and
// writes (StreamOps) over a UringTcpConnection. A connection is made as on the epoll engine
// (TcpOps::connect, the listeners' accept, the connection header) and then moves to the ring
// (on_ring): from there its waits are the ring's. TLS connections, zero-copy writes and the
// connections the end-of-step drain adopts stay on the epoll reactor.
// Thread: the strand's worker.
#include <cstdint>
#include <optional>

#include "volley/stats/tcp_summary.hpp"
#include "volley/transport/uring_tcp_connection.hpp"
#include "stream_ops.hpp"

namespace volley::engine {

struct UringTcpOps : StreamOps {
  using Link = transport::UringTcpConnection;

  /// Before a wait to read: as TcpOps::expect (SO_RCVLOWAT for a large message's rest); for a
  /// small message's, the connection's standing receive (UringTcpConnection::keep_receiving).
  static void expect(Link& tcp, std::uint64_t bytes);
  /// At the start of a read: what the standing receive counted, taken in place.
  static std::optional<OpOutcome> read_now(StrandCore& s, PendingRead& r, Link& tcp);
  /// A resuming read of `c` completed: the prefetch for the worker's next one (read_successor.hpp).
  static void resumed(StrandCore& s, StrandConnection& c, Link& tcp, const void* frame,
                      const transport::IoDone& got);
  /// The connection's TCP_INFO into `into`.
  static void sample(Link& tcp, stats::TcpSummary& into);
  /// The peer closed the connection before any data passed on it (transport::closed_at_header).
  static bool closed_at_header(Link& tcp);
};

}  // namespace volley::engine
