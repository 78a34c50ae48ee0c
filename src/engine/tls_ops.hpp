#pragma once
// The TLS executor: a byte stream (StreamOps) over a TlsConnection. A connect is TCP's connect
// (TcpOps::connect, the connection header included) and then the client's handshake; an accept
// takes a TCP connection as TCP's does and then runs the server's handshake. Each handshake is
// timed and counted in its operation's handshake slots (full or resumed), apart from the
// operation itself; a failed one is a tls_handshake error. A client with `resume` keeps its
// session for the strand's next connection of the same id.
//
// It has no `expect` hook: a TLS reader wakes at each arrival (SO_RCVLOWAT 1), not at a mark as a
// TCP reader of large messages does. Its decryption costs far more per byte than the wake-ups a
// mark saves, and measured on loopback the mark cost the writer more than it saved the reader:
// with a 1 MiB mark, a stream of 64 KiB writes took 0.56 us of writer CPU per KiB and ran at
// 14 Gbit/s, against 0.37 us and 20.9 Gbit/s without (docs/performance.md, "TLS").
// Thread: the strand's worker.
#include <boost/asio/awaitable.hpp>

#include "volley/profile/model.hpp"
#include "volley/stats/tcp_summary.hpp"
#include "volley/transport/tls_connection.hpp"
#include "connect_target.hpp"
#include "stream_ops.hpp"

namespace volley::engine {

struct TlsOps : StreamOps {
  using Link = transport::TlsConnection;
  static constexpr profile::Protocol kProtocol = profile::Protocol::kTls;

  static boost::asio::awaitable<OpOutcome> connect(StrandCore& s, const OpPlan& op,
                                                   const profile::ConnectOp& c, ConnectTarget to);
  /// The accept's connection (the newest of its id, as TCP arrived) becomes TLS: the server's
  /// handshake with `peer`.
  static boost::asio::awaitable<OpOutcome> accept(StrandCore& s, const OpPlan& op,
                                                  const profile::AcceptOp& a);
  /// Closes `c` (close_notify first). A client that resumes keeps the session first; under
  /// TLS 1.3 the peer's ticket may still be on its way, and is waited for.
  static Started disconnect(StrandCore& s, const OpPlan& op, StrandConnection& c, Link& tls);
  static void sample(Link& tls, stats::TcpSummary& into);
  static bool closed_at_header(Link& tls);
};

}  // namespace volley::engine
