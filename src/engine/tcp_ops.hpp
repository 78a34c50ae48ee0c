#pragma once
// The TCP executor: the byte stream's reads and writes (StreamOps) over a TcpConnection, and what
// only TCP does: the connect (the worker's connect gate, socket options, srcaddr=, the connection
// header), reads in place while data is there, SO_RCVLOWAT, the prefetch for the next resumed
// read, TCP_INFO, and the slave's close of a connection at its header. Thread: the strand's worker.
#include <cstdint>
#include <optional>

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include "volley/profile/model.hpp"
#include "volley/stats/tcp_summary.hpp"
#include "volley/transport/tcp_connection.hpp"
#include "connect_target.hpp"
#include "stream_ops.hpp"

namespace volley::engine {

struct TcpOps : StreamOps {
  using Link = transport::TcpConnection;
  static constexpr profile::Protocol kProtocol = profile::Protocol::kTcp;

  /// Connects a new connection of the op's id to `to`, and sends its header.
  static boost::asio::awaitable<OpOutcome> connect(StrandCore& s, const OpPlan& op,
                                                   const profile::ConnectOp& c, ConnectTarget to);
  /// A write flowop of `bytes` on `c`: with zerocopy, zero-copy sends (ZeroCopyWrite); else the
  /// byte stream's write.
  static Started write(StrandCore& s, const OpPlan& op, StrandConnection& c, std::uint64_t bytes,
                       std::optional<std::uint64_t> chunk);
  /// Before the connection closes: the completions of its zero-copy sends, counted.
  static void closing(StrandCore& s, Link& tcp);
  /// An accepted connection, before the strand takes it: the accept's socket options.
  static boost::system::error_code accepted(Link& tcp, const profile::ConnectionOptions& options);
  /// A connection the peer made that the strand never accepted, joining its pool.
  static void adopted(Link& tcp);
  /// At the start of every read of `r`: a message of kWakeFrom or more comes as a stream, whose
  /// reads count what is left rather than take a short read as the end of what is there.
  static void before_read(Link& tcp, const PendingRead& r);
  /// Reads what the connection has now, in place, towards `r` while data is there: no trip
  /// through the event loop (and its epoll_wait) per read while a bulk reader keeps finding data.
  /// The outcome when the read is over; nullopt when the rest must wait (the socket is drained)
  /// or give way to the worker's other strands (over budget).
  static std::optional<OpOutcome> read_now(StrandCore& s, PendingRead& r, Link& tcp);
  /// Before a wait to read: the peer will send at least `bytes` more, so the socket need not wake
  /// its reader before they are there, or a MiB of them (StreamOps::certain: at most one wake-up
  /// per message or per MiB, not per arrival; on loopback a wake-up is the sender's CPU: its send
  /// runs the receiver's wake-up). From 16 KiB; below it the mark stays at 1.
  static void expect(Link& tcp, std::uint64_t bytes);
  /// A resuming read of `c` completed: tells the strand whose read completed before this one's
  /// where its state lies, and prefetches its own successor's (see StrandCore::Successor).
  static void resumed(StrandCore& s, StrandConnection& c, Link& tcp, const void* frame,
                      const transport::IoDone& got);
  /// The connection's TCP_INFO into `into`.
  static void sample(Link& tcp, stats::TcpSummary& into);
  /// The peer closed the connection before any data passed on it (transport::closed_at_header).
  static bool closed_at_header(Link& tcp);
};

}  // namespace volley::engine
