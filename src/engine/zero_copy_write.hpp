#pragma once
// A write flowop with zerocopy on a TCP connection (TcpOps::write): each send asks the kernel to
// send from the pages rather than copy them (MSG_ZEROCOPY), from the worker's read-only send
// buffer (ZeroCopyBuffer), which nothing changes while the kernel may still read it. Counted in
// the flowop's slot: the sends made, and, as their completions are read, how many the kernel sent
// from the pages and how many it copied anyway (results::ZeroCopyCounters). Completions are read
// every kCollectEvery sends, when the socket has no room, when the kernel refuses a send for the
// completions left unread (ENOBUFS), and before the connection closes. Thread: the strand's worker.
#include <cstdint>
#include <optional>

#include "operation.hpp"
#include "volley/transport/tcp_connection.hpp"

namespace volley::engine {

class StrandCore;

struct ZeroCopyWrite {
  /// Writes `bytes` on `c` (a TCP connection), at most `chunk` per call: at once while the socket
  /// takes them, else in a coroutine that waits.
  static Started write(StrandCore& s, const OpPlan& op, StrandConnection& c, std::uint64_t bytes,
                       std::optional<std::uint64_t> chunk);
  /// Reads the completions queued on `tcp` into the slots of the flowops that made their sends;
  /// nothing when it made none. A completion that comes after the connection closed is lost: its
  /// send stays unconfirmed.
  static void collect(StrandCore& s, transport::TcpConnection& tcp);
  /// Completions are read after this many sends at most: a read (recvmsg) takes every completion
  /// queued, and the kernel merges neighbouring ones, so one read settles many sends.
  static constexpr std::uint64_t kCollectEvery = 64;
};

}  // namespace volley::engine
