#pragma once
// A connection without a socket, for the engine's tests: its peer is a script that answers every
// read with bytes, takes every write, and fails on cue (as Boost.Beast's test::stream does with
// its fail count): on the Nth call, every Kth call would block, transfers are partial, or a wait
// never completes until cancelled. It lets tests drive EAGAIN, partial transfers, resets,
// cancellation and timeout= through the strand's real loop. The engine makes one only when
// EngineConfig::connect_in_memory is set (tests); the helpers are in tests/support.
// Thread: the owning worker's.
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "volley/transport/io_result.hpp"

namespace volley::transport {

struct FaultScript {
  /// The Nth try_read/try_write/sendfile call (1-based; 0 = never) fails with `error`.
  std::uint64_t fail_on_call = 0;
  boost::system::error_code error;
  /// Every Kth call (0 = never) would block, so the strand must wait.
  std::uint64_t would_block_every = 0;
  /// At most this many bytes per call: partial transfers.
  std::size_t max_per_call = std::numeric_limits<std::size_t>::max();
  /// Waits never complete by themselves: only cancel() (a cut, timeout=) ends them.
  bool never_ready = false;
  /// Bytes the peer sends before it closes (a read after them sees end of file).
  std::uint64_t readable_bytes = std::numeric_limits<std::uint64_t>::max();
  /// Reads may ask for more than the flowop wants, as on TCP. Off by default: this peer answers
  /// every read with as many bytes as asked, which a real peer, sending only what the profile
  /// says, does not.
  bool reads_ahead = false;
};

/// What the strand did to the connection; shared with the test, so it outlives the connection.
/// Atomic: the strand counts on its worker thread while the test polls from its own
/// (ThreadSanitizer found the plain counters racing).
struct FaultTally {
  std::atomic<std::uint64_t> calls = 0;
  std::atomic<std::uint64_t> bytes_read = 0;
  std::atomic<std::uint64_t> bytes_written = 0;
  std::atomic<std::uint64_t> would_blocks = 0;
  std::atomic<std::uint64_t> waits = 0;
  std::atomic<std::uint64_t> cancels = 0;
  std::atomic<bool> closed = false;
};

class MemoryConnection {
 public:
  MemoryConnection(const boost::asio::any_io_executor& executor, FaultScript script,
                   std::shared_ptr<FaultTally> tally);

  IoResult try_read(std::span<char> into);
  [[nodiscard]] bool reads_ahead() const { return script_.reads_ahead; }
  /// try_read, and on would-block a wait and again: what TcpConnection::read does in one call.
  ReadAwaitable read(std::span<char> into);
  IoResult try_write(std::span<const char> from);
  IoResult sendfile(int fd, off_t* offset, std::size_t bytes);
  WaitAwaitable wait(Wait what);
  void cancel();
  void close();

 private:
  /// The common part of every call: the fault it is due, if any; else how many bytes may move.
  IoResult begin_call(std::size_t wanted);

  FaultScript script_;
  std::shared_ptr<FaultTally> tally_;
  /// On the heap: inline, this test-only kind would make every connection (AnyConnection is as
  /// large as its largest kind) a timer larger.
  std::unique_ptr<boost::asio::steady_timer> ready_;
  std::uint64_t read_so_far_ = 0;
};

}  // namespace volley::transport
