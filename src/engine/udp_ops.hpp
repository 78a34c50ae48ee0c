#pragma once
// The UDP executor: the connection handshake, and one datagram per write or read, with the header
// that lets the receiving side count loss, reordering, duplicates and jitter; a stream of them
// (burst) in batches, many datagrams per system call. UDP bytes never count in a connection's
// step_written/step_read: the end-of-step drain does not wait for datagrams, which may be lost;
// the receiver's counts say what arrived. Thread: the strand's worker.
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>

#include <boost/asio/awaitable.hpp>
#include <boost/system/error_code.hpp>

#include "volley/profile/model.hpp"
#include "volley/transport/udp_batch.hpp"
#include "volley/transport/udp_connection.hpp"
#include "connect_target.hpp"
#include "operation.hpp"

namespace volley::engine {

class StrandCore;

struct UdpOps {
  using Link = transport::UdpConnection;
  using Clock = std::chrono::steady_clock;
  static constexpr profile::Protocol kProtocol = profile::Protocol::kUdp;
  /// A datagram may be lost: what the peer wrote is not bound to arrive.
  static constexpr bool kReliable = false;
  /// A read with no timeout= waits this long for a datagram, then counts a timeout and goes on: a
  /// lost datagram must not stall a run (docs/uperf-compatibility.md).
  static constexpr std::chrono::milliseconds kReadTimeout{500};

  /// The handshake with the peer's listener at `to`: hello, until the answer names the data port.
  static boost::asio::awaitable<OpOutcome> connect(StrandCore& s, const OpPlan& op,
                                                   const profile::ConnectOp& c, ConnectTarget to);
  /// An arriving connection, before its accept takes it: gso as the accept asks.
  static boost::system::error_code accepted(Link& udp, const profile::ConnectionOptions& options);
  /// One datagram of `bytes` written on `c`: done here, without a coroutine frame, when the
  /// socket takes it (almost always), else awaitable.
  static Started write(StrandCore& s, const OpPlan& op, StrandConnection& c, std::uint64_t bytes,
                       std::optional<std::uint64_t> chunk);
  /// One datagram read on `c`, the same way.
  static Started read(StrandCore& s, const OpPlan& op, StrandConnection& c, std::uint64_t bytes,
                      std::optional<std::uint64_t> chunk);
  /// Runs iterations of a transaction whose every iteration is `op` alone (see Strand::burst_op)
  /// back to back, in place, from iteration `i` (begun at `from`, the run loop's checks passed),
  /// in batches: the datagrams of many iterations in one system call (sendmmsg, or with gso
  /// super-buffers; recvmmsg), never more than the step's iterations left. Each datagram is one
  /// operation and one iteration, counted as the run loop would; the operations of a batch end
  /// together, and each is timed as its share of the time since the last batch ended.
  /// Returns with `i` and `from` at the iteration it stopped in: nullopt when that one is not
  /// begun (the run loop's checks say whether it runs), else what its flowop began (it must wait,
  /// or it failed), for the run loop to finish and count.
  static std::optional<Started> burst(StrandCore& s, const TxnPlan& txn, const OpPlan& op,
                                      StrandConnection& c, std::uint64_t& i, std::uint64_t limit,
                                      Clock::time_point& from, bool timing);

 private:
  enum class Direction { kRead, kWrite };
  /// One burst's inputs, and its loop's state.
  struct Burst {
    StrandCore& s;
    const TxnPlan& txn;
    const OpPlan& op;
    StrandConnection& c;
    std::uint64_t& i;
    std::uint64_t limit;
    Clock::time_point& from;
    bool timing;
  };
  static std::optional<Started> burst_writes(Burst& b);
  static std::optional<Started> burst_reads(Burst& b);
  /// The next batch of a burst of writes, laid out one after the other in the worker's buffer
  /// (a super-buffer is then one piece for the kernel to copy); the outcome when its first
  /// datagram is refused.
  static std::optional<OpOutcome> fill_batch(Burst& b, transport::SendBatch& batch);
  /// Counts `m` iterations of the burst (ops, iterations, latency) that ended together at `done`.
  static void count_batch(const Burst& b, std::uint64_t m, Clock::time_point done);
  /// After a batch of `m` that ended at `done`: the run loop's checks between two iterations.
  /// True to go on, with `from` the next batch's start.
  static bool go_on(Burst& b, std::uint64_t m, Clock::time_point done);
  /// One datagram that arrived on `udp` at `arrived_ns` (its first bytes, its length): counted by
  /// the receiver (true), or a duplicate or not one of this run's (false).
  static bool arrive(StrandCore& s, const OpPlan& op, Link& udp, std::uint32_t token,
                     std::span<const char> datagram, std::size_t length, std::uint64_t arrived_ns);
  /// What one try at a datagram came to (kGiveWay: read on after duplicates, once the worker's
  /// other strands had their turn).
  enum class Try { kDone, kBlocked, kGiveWay, kFailed };
  static Started datagram(StrandCore& s, const OpPlan& op, StrandConnection& c, Direction direction,
                          std::uint64_t bytes);
  /// The outcome when the datagram cannot be sent at all (its size, or the step is over).
  static std::optional<OpOutcome> refused(StrandCore& s, Direction direction, std::uint64_t bytes);
  /// One try: the outcome, or nullopt when the socket would block (`blocked`) or when the
  /// strand must give way to the worker's others first (read on after duplicates).
  static std::optional<OpOutcome> now(StrandCore& s, const OpPlan& op, StrandConnection& c,
                                      Direction direction, std::uint64_t bytes, bool& blocked);
  /// now() without an OpOutcome: its error in `ec`. With `stamp_ns`, a write's send time is
  /// *stamp_ns (a clock read the caller has in hand) and a read's arrival time is stored there;
  /// without it each reads the clock itself.
  static Try try_once(StrandCore& s, const OpPlan& op, StrandConnection& c, Direction direction,
                      std::uint64_t bytes, std::uint64_t* stamp_ns, boost::system::error_code& ec);
  /// The rest of datagram(): waits (blocked) or yields, then tries again until done.
  /// With `pause`, a read first sleeps that long out of epoll (a stream's reader that drained
  /// its socket: see UdpReadPace).
  static boost::asio::awaitable<OpOutcome> later(StrandCore& s, const OpPlan& op,
                                                 Direction direction, std::uint64_t bytes,
                                                 bool blocked, Clock::duration pause = {});
  static const char* name(Direction direction) {
    return direction == Direction::kWrite ? "udp write" : "udp read";
  }
};

}  // namespace volley::engine
