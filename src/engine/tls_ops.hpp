#pragma once
// The TLS executor: a byte stream (StreamOps) over a TlsConnection. A connect is TCP's connect
// (TcpOps::connect, the connection header included) and then the client's handshake; an accept
// takes a TCP connection as TCP's does and then runs the server's handshake. Each handshake is
// timed and counted in its operation's handshake slots (full or resumed), apart from the
// operation itself; a failed one is a tls_handshake error. A client with `resume` keeps its
// session for the strand's next connection of the same id.
//
// Its reads take what is there, every record OpenSSL holds or the socket has, in place while data
// is there (read_now, as TCP's); a reader of large messages wakes at a mark (expect), in
// ciphertext on the socket, of the application bytes sure to come less what OpenSSL holds
// (TlsConnection::wake_after).
// Thread: the strand's worker.
#include <cstdint>
#include <optional>

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
  /// Reads what the connection has now towards `r` while data is there, as TcpOps::read_now:
  /// the outcome when the read is over; nullopt when the rest must wait or give way.
  static std::optional<OpOutcome> read_now(StrandCore& s, PendingRead& r, Link& tls);
  /// Before a wait to read: the peer will send at least `bytes` more application bytes (see
  /// TcpOps::expect): from 16 KiB, the mark of what of them is sure to come on the socket.
  static void expect(Link& tls, std::uint64_t bytes);
  static void sample(Link& tls, stats::TcpSummary& into);
  static bool closed_at_header(Link& tls);
};

}  // namespace volley::engine
