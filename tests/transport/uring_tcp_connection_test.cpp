// The io_uring engine's TCP connection (transport/uring_tcp_connection.hpp) over a worker's ring
// (transport/ring.hpp), on a real loopback pair: a read that waits completes when data comes (the
// ring's eventfd wakes Asio's loop), a cancel or a close ends it with operation_aborted, a close
// reaches the peer, the loop ends by itself when nothing is in flight, many reads in flight at
// once each get their own completion, and connections take slots of the ring's table of
// registered files while there are any; and the standing receive of small messages.
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <algorithm>
#include <cstddef>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include "volley/transport/ring.hpp"
#include "volley/transport/uring_tcp_connection.hpp"
#include "support/tcp_pair.hpp"

namespace volley::transport {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

/// A TcpPair whose `ours` has moved onto a ring of the pair's io_context.
struct RingPair {
  test::TcpPair pair;
  std::unique_ptr<Ring> ring;
  UringTcpConnection conn;

  RingPair() {
    auto opened = Ring::open(*pair.io);
    if (auto* why = std::get_if<std::string>(&opened)) {
      ADD_FAILURE() << *why;
      return;
    }
    ring = std::move(std::get<std::unique_ptr<Ring>>(opened));
    EXPECT_FALSE(UringTcpConnection::adopt(*pair.ours, *ring, conn));
  }
};

/// The peer of `pair` sees the end of the stream within 2 s: the socket really closed.
void ExpectThePeerSeesTheEnd(test::TcpPair& pair) {
  pollfd peer{pair.peer->native_handle(), POLLIN, 0};
  ASSERT_EQ(::poll(&peer, 1, 2000), 1) << "the socket stayed open";
  char byte = 0;
  boost::system::error_code peer_error;
  pair.peer->read_some(asio::buffer(&byte, 1), peer_error);
  EXPECT_EQ(peer_error, asio::error::eof);
}

TEST(Ring, CanBeSetUpOnThisMachine) { EXPECT_EQ(Ring::unavailable(), ""); }

TEST(UringTcpConnection, AReadThatWaitsCompletesWhenDataComes) {
  RingPair p;
  std::array<char, 4096> buffer{};
  std::size_t got = 0;
  boost::system::error_code error;
  asio::steady_timer later(*p.pair.io, 50ms);
  later.async_wait([&](auto) { p.pair.send(100); });
  ASSERT_TRUE(p.pair.run([&]() -> asio::awaitable<void> {
    auto [ec, n] = co_await p.conn.read(buffer);
    error = ec;
    got = n;
  }));
  EXPECT_FALSE(error) << error.message();
  EXPECT_EQ(got, 100U);
  EXPECT_EQ(p.ring->in_flight(), 0U);
}

TEST(UringTcpConnection, DataAlreadyThereCompletesTheReadInTheSubmission) {
  RingPair p;
  p.pair.send(3000);
  std::array<char, 1000> buffer{};
  std::size_t total = 0;
  ASSERT_TRUE(p.pair.run([&]() -> asio::awaitable<void> {
    for (int i = 0; i < 3; ++i) {
      auto [ec, n] = co_await p.conn.read(buffer);
      EXPECT_FALSE(ec);
      total += n;
    }
  }));
  EXPECT_EQ(total, 3000U);
}

TEST(UringTcpConnection, TheEndOfTheStreamIsEof) {
  RingPair p;
  p.pair.peer->close();
  std::array<char, 64> buffer{};
  boost::system::error_code error;
  ASSERT_TRUE(p.pair.run([&]() -> asio::awaitable<void> {
    auto [ec, n] = co_await p.conn.read(buffer);
    error = ec;
  }));
  EXPECT_EQ(error, asio::error::eof);
}

TEST(UringTcpConnection, CancelEndsAWaitingReadWithOperationAborted) {
  RingPair p;
  std::array<char, 64> buffer{};
  boost::system::error_code error;
  asio::steady_timer later(*p.pair.io, 50ms);
  later.async_wait([&](auto) { p.conn.cancel(); });
  ASSERT_TRUE(p.pair.run([&]() -> asio::awaitable<void> {
    auto [ec, n] = co_await p.conn.read(buffer);
    error = ec;
  }));
  EXPECT_EQ(error, asio::error::operation_aborted);
}

TEST(UringTcpConnection, CloseEndsAWaitingReadAndThePeerSeesTheEnd) {
  RingPair p;
  std::array<char, 64> buffer{};
  boost::system::error_code error;
  asio::steady_timer later(*p.pair.io, 50ms);
  later.async_wait([&](auto) { p.conn.close(); });
  ASSERT_TRUE(p.pair.run([&]() -> asio::awaitable<void> {
    auto [ec, n] = co_await p.conn.read(buffer);
    error = ec;
  }));
  EXPECT_EQ(error, asio::error::operation_aborted);
  // The socket really closed (the ring held a reference while the read was in flight).
  char byte = 0;
  boost::system::error_code peer_error;
  p.pair.peer->read_some(asio::buffer(&byte, 1), peer_error);
  EXPECT_EQ(peer_error, asio::error::eof);
}

TEST(UringTcpConnection, AConnectionClosedJustBeforeTheRingShutsDownIsClosed) {
  // What a worker does at its end: its strands' connections close, then its ring shuts down. The
  // peer must see the end of the stream: no close may wait for a later pass of the ring.
  RingPair p;
  p.conn.close();
  p.ring->shutdown();
  ExpectThePeerSeesTheEnd(p.pair);
}

TEST(UringTcpConnection, AConnectionClosedWithNothingInFlightReachesThePeerAtOnce) {
  // The ring's table of registered files holds a reference to the socket: its slot must be
  // emptied at the close, or the socket stays open (no FIN) while the ring runs on.
  RingPair p;
  ASSERT_GE(p.conn.ring_slot(), 0) << "this kernel registered no file";
  p.conn.close();
  EXPECT_EQ(p.ring->registered_files(), 0U);
  ExpectThePeerSeesTheEnd(p.pair);
}

TEST(UringTcpConnection, ConnectionsTakeFreeSlotsAndBeyondTheTableNameTheirDescriptor) {
  // A table of 2 slots and 3 connections: the third names its descriptor, and every one reads
  // through the ring alike; a closed connection's slot goes to the next one adopted.
  std::vector<test::TcpPair> pairs(4);
  auto opened = Ring::open(*pairs[0].io, 64, 2);
  ASSERT_TRUE(std::holds_alternative<std::unique_ptr<Ring>>(opened));
  auto ring = std::move(std::get<std::unique_ptr<Ring>>(opened));
  // Each pair has an io_context of its own; the ring's is the first's, so the others' sockets
  // are adopted (taken out of their reactors) and then only the ring waits on them.
  std::vector<UringTcpConnection> conns(3);
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_FALSE(UringTcpConnection::adopt(*pairs[i].ours, *ring, conns[i]));
  }
  EXPECT_EQ(conns[0].ring_slot(), 0);
  EXPECT_EQ(conns[1].ring_slot(), 1);
  EXPECT_EQ(conns[2].ring_slot(), -1);
  EXPECT_EQ(ring->registered_files(), 2U);
  std::vector<std::array<char, 64>> buffers(3);
  std::vector<std::size_t> got(3, 0);
  for (std::size_t i = 0; i < 3; ++i) {
    asio::co_spawn(
        *pairs[0].io,
        [&, i]() -> asio::awaitable<void> {
          auto [ec, n] = co_await conns[i].read(buffers[i]);
          got[i] = ec ? 0 : n;
        },
        asio::detached);
    pairs[i].send(i + 1);
  }
  pairs[0].io->run_for(2s);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(got[i], i + 1) << i;
  conns[1].close();
  EXPECT_EQ(ring->registered_files(), 1U);
  UringTcpConnection next;
  ASSERT_FALSE(UringTcpConnection::adopt(*pairs[3].ours, *ring, next));
  EXPECT_EQ(next.ring_slot(), 1);
  EXPECT_EQ(ring->registered_files(), 2U);
}

TEST(UringTcpConnection, WaitsForRoomThenWritesAndReadsBack) {
  RingPair p;
  bool writable = false;
  ASSERT_TRUE(p.pair.run([&]() -> asio::awaitable<void> {
    auto [ec] = co_await p.conn.wait(Wait::kWritable);
    writable = !ec;
  }));
  EXPECT_TRUE(writable);
  const std::string hello = "hello";
  const IoResult wrote = p.conn.try_write(std::span<const char>(hello.data(), hello.size()));
  EXPECT_EQ(wrote.bytes, hello.size());
  std::array<char, 5> echo{};
  asio::read(*p.pair.peer, asio::buffer(echo));
  EXPECT_EQ(std::string(echo.data(), echo.size()), hello);
}

TEST(UringTcpConnection, TheLoopEndsByItselfOnceNothingIsInFlight) {
  // The ring's eventfd is watched only while operations are in flight: a finished read leaves
  // no work behind, so io_context::run() returns (a worker's thread ends with its strands).
  RingPair p;
  p.pair.send(10);
  std::array<char, 64> buffer{};
  bool done = false;
  asio::co_spawn(
      *p.pair.io,
      [&]() -> asio::awaitable<void> {
        co_await p.conn.read(buffer);
        done = true;
      },
      asio::detached);
  const auto start = std::chrono::steady_clock::now();
  p.pair.io->run_for(5s);
  EXPECT_TRUE(done);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

/// CPU time this thread has used.
std::chrono::microseconds thread_cpu() {
  rusage usage{};
  ::getrusage(RUSAGE_THREAD, &usage);
  return std::chrono::seconds(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         std::chrono::microseconds(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

TEST(UringTcpConnection, AWaitingLoopSleepsBetweenCompletions) {
  // Reads that wait 20 ms each for their data: the loop must sleep in between. A completion
  // signals the ring's eventfd; left unread, the signal woke the loop again and again, which then
  // spun on the CPU until the next data came.
  RingPair p;
  std::array<char, 64> buffer{};
  int reads = 0;
  asio::steady_timer pace(*p.pair.io);
  const auto cpu_before = thread_cpu();
  const auto wall_before = std::chrono::steady_clock::now();
  ASSERT_TRUE(p.pair.run([&]() -> asio::awaitable<void> {
    for (int i = 0; i < 10; ++i) {
      pace.expires_after(20ms);
      pace.async_wait([&](auto) { p.pair.send(8); });
      auto [ec, n] = co_await p.conn.read(buffer);
      if (!ec && n > 0) ++reads;
    }
  }));
  const auto cpu = thread_cpu() - cpu_before;
  const auto wall = std::chrono::steady_clock::now() - wall_before;
  EXPECT_EQ(reads, 10);
  EXPECT_LT(cpu * 4, wall) << "the loop spun: " << cpu.count() << " us of CPU in "
                           << std::chrono::duration_cast<std::chrono::microseconds>(wall).count()
                           << " us";
}

TEST(UringTcpConnection, ManyReadsInFlightEachGetTheirOwnCompletion) {
  // 64 connections, each with a read in flight, answered in reverse order.
  constexpr std::size_t kConnections = 64;
  test::TcpPair first;
  auto opened = Ring::open(*first.io);
  ASSERT_TRUE(std::holds_alternative<std::unique_ptr<Ring>>(opened));
  auto ring = std::move(std::get<std::unique_ptr<Ring>>(opened));
  asio::ip::tcp::acceptor acceptor(*first.io, {asio::ip::make_address("127.0.0.1"), 0});
  std::vector<asio::ip::tcp::socket> peers;
  std::vector<UringTcpConnection> conns(kConnections);
  for (std::size_t i = 0; i < kConnections; ++i) {
    peers.emplace_back(*first.io).connect(acceptor.local_endpoint());
    asio::ip::tcp::socket accepted(*first.io);
    acceptor.accept(accepted);
    accepted.non_blocking(true);
    TcpConnection tcp(std::move(accepted));
    ASSERT_FALSE(UringTcpConnection::adopt(tcp, *ring, conns[i]));
  }
  std::vector<std::array<char, 64>> buffers(kConnections);
  std::vector<std::size_t> got(kConnections, 0);
  for (std::size_t i = 0; i < kConnections; ++i) {
    asio::co_spawn(
        *first.io,
        [&, i]() -> asio::awaitable<void> {
          auto [ec, n] = co_await conns[i].read(buffers[i]);
          got[i] = ec ? 0 : n;
        },
        asio::detached);
  }
  asio::steady_timer later(*first.io, 50ms);
  later.async_wait([&](auto) {
    for (std::size_t i = kConnections; i-- > 0;) {
      const std::string data(i + 1, 'x');
      asio::write(peers[i], asio::buffer(data));
    }
  });
  first.io->run_for(5s);
  for (std::size_t i = 0; i < kConnections; ++i) EXPECT_EQ(got[i], i + 1) << i;
  EXPECT_EQ(ring->in_flight(), 0U);
}

/// A receive of the test's own: its result, kept by the test (it owns the operation).
class CountedRecv final : public Ring::Op {
 public:
  void complete(int r) override { result = r; }
  void drop() override {}
  int result = -1000;  ///< not completed yet
};

TEST(Ring, QueuedOperationsGoToTheKernelInBatchesOfAtMostHalfTheBacklog) {
  // One more receive than a batch, each on a connection with a byte waiting: the first batch is
  // submitted as the next one is queued (its receives take their bytes then, inside the
  // submission), the last waits for the loop's pass. Without the bound, all wait for the pass.
  test::TcpPair first;
  auto opened = Ring::open(*first.io);
  ASSERT_TRUE(std::holds_alternative<std::unique_ptr<Ring>>(opened));
  auto ring = std::move(std::get<std::unique_ptr<Ring>>(opened));
  const std::size_t batch = ring->submission_batch();
  std::ifstream backlog_file("/proc/sys/net/core/netdev_max_backlog");
  unsigned backlog = 0;
  if (backlog_file >> backlog) {
    EXPECT_EQ(batch, std::clamp(backlog / 2, 1U, 4096U));
  }
  rlimit files{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &files), 0);
  if (2 * (batch + 1) + 64 > files.rlim_cur) GTEST_SKIP() << "a batch needs more sockets here";
  asio::ip::tcp::acceptor acceptor(*first.io, {asio::ip::make_address("127.0.0.1"), 0});
  std::vector<asio::ip::tcp::socket> peers;
  std::vector<asio::ip::tcp::socket> ours;
  const char byte = 'x';
  for (std::size_t i = 0; i <= batch; ++i) {
    peers.emplace_back(*first.io).connect(acceptor.local_endpoint());
    asio::write(peers.back(), asio::buffer(&byte, 1));
    acceptor.accept(ours.emplace_back(*first.io));
  }
  std::vector<CountedRecv> recvs(batch + 1);
  std::vector<std::array<char, 8>> buffers(batch + 1);
  for (std::size_t i = 0; i <= batch; ++i) {
    ring->start(recvs[i], [&, i](io_uring_sqe* sqe) {
      io_uring_prep_recv(sqe, ours[i].native_handle(), buffers[i].data(), buffers[i].size(), 0);
    });
  }
  auto waiting = [&](std::size_t i) {
    int bytes = -1;
    ::ioctl(ours[i].native_handle(), FIONREAD, &bytes);
    return bytes;
  };
  EXPECT_EQ(waiting(0), 0);
  EXPECT_EQ(waiting(batch - 1), 0);
  EXPECT_EQ(waiting(batch), 1);
  first.io->run_for(1s);
  for (std::size_t i = 0; i <= batch; ++i) EXPECT_EQ(recvs[i].result, 1) << i;
}

// The resuming read (read_resuming, as the engine's strands co_await it): the completion resumes
// the coroutine in place with what came, the end of the stream, a cancel, or a closed connection.
TEST(UringResumingIo, ReadsWhatIsThereAndWaitsForWhatComesLater) {
  RingPair p;
  std::array<char, 64> buf{};
  IoDone first, second, third, fourth;
  asio::steady_timer later(*p.pair.io);
  ASSERT_TRUE(p.pair.run([&]() -> asio::awaitable<void> {
    p.pair.send(10);
    first = co_await p.conn.read_resuming(buf);
    later.expires_after(20ms);  // data that arrives while the receive is in the ring
    later.async_wait([&](const boost::system::error_code&) { p.pair.send(100); });
    second = co_await p.conn.read_resuming(buf);  // fills the buffer: the rest stays
    third = co_await p.conn.read_resuming(buf);
    p.pair.peer->close();
    fourth = co_await p.conn.read_resuming(buf);
  }));
  EXPECT_FALSE(first.ec);
  EXPECT_EQ(first.bytes, 10U);
  EXPECT_NE(first.op, nullptr);  // where the operation lay, for the prefetch
  EXPECT_EQ(second.bytes, 64U);
  EXPECT_EQ(third.bytes, 36U);
  EXPECT_FALSE(third.ec);
  EXPECT_EQ(fourth.ec, asio::error::eof);
  EXPECT_EQ(p.ring->in_flight(), 0U);
}

TEST(UringResumingIo, CancelAndCloseEndItWithOperationAborted) {
  for (const bool close : {false, true}) {
    RingPair p;
    std::array<char, 64> buf{};
    IoDone got;
    asio::steady_timer later(*p.pair.io, 30ms);
    later.async_wait([&](auto) { close ? p.conn.close() : p.conn.cancel(); });
    ASSERT_TRUE(
        p.pair.run([&]() -> asio::awaitable<void> { got = co_await p.conn.read_resuming(buf); }));
    EXPECT_EQ(got.ec, asio::error::operation_aborted) << (close ? "close" : "cancel");
  }
}

TEST(UringResumingIo, OnAClosedConnectionItFailsWithoutTheRing) {
  RingPair p;
  p.conn.close();
  std::array<char, 64> buf{};
  IoDone got;
  ASSERT_TRUE(
      p.pair.run([&]() -> asio::awaitable<void> { got = co_await p.conn.read_resuming(buf); }));
  EXPECT_EQ(got.ec, asio::error::bad_descriptor);
}

// A receive still in the ring when it shuts down is dropped: its coroutine is destroyed, never
// resumed, and nothing leaks (the sanitizer build checks that).
TEST(UringResumingIo, AReadInFlightWhenTheRingShutsDownIsDropped) {
  RingPair p;
  std::array<char, 64> buf{};
  bool resumed = false;
  auto frames = std::make_shared<int>(0);
  asio::co_spawn(
      *p.pair.io,
      [&, keep = frames]() -> asio::awaitable<void> {
        (void)co_await p.conn.read_resuming(buf);
        resumed = true;
      },
      asio::detached);
  p.pair.io->run_for(50ms);
  EXPECT_EQ(p.ring->in_flight(), 1U);
  p.ring->shutdown();
  p.pair.io->run_for(50ms);
  EXPECT_FALSE(resumed);
  EXPECT_EQ(frames.use_count(), 1) << "the coroutine's frame was not destroyed";
}

// The send (send_resuming): what fits goes at once; on a full socket it waits for room, and a
// cancel then ends it with operation_aborted, counting nothing it did not send.
TEST(UringResumingIo, ASendGoesAtOnceOrWaitsForRoom) {
  RingPair p;
  const int small = 4096;
  ::setsockopt(p.conn.native_handle(), SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
  std::vector<char> data(1 << 20, 'x');
  IoDone first;
  std::size_t sent = 0;
  std::size_t drained = 0;
  asio::steady_timer later(*p.pair.io, 30ms);
  later.async_wait([&](auto) {  // the peer reads everything sent so far
    std::vector<char> sink(1 << 20);
    boost::system::error_code ec;
    while (p.pair.peer->available(ec) > 0)
      drained += p.pair.peer->read_some(asio::buffer(sink), ec);
  });
  ASSERT_TRUE(p.pair.run([&]() -> asio::awaitable<void> {
    first = co_await p.conn.send_resuming(std::span<const char>(data.data(), 100));
    // More than the socket holds: each send takes what fits, until one must wait for the read.
    while (sent < data.size() && drained == 0) {
      const IoDone d = co_await p.conn.send_resuming(data);
      EXPECT_FALSE(d.ec) << d.ec.message();
      sent += d.bytes;
    }
  }));
  EXPECT_FALSE(first.ec);
  EXPECT_EQ(first.bytes, 100U);
  EXPECT_GT(drained, 0U) << "no send waited for the peer to read";
  EXPECT_GT(sent, 0U);
}

TEST(UringResumingIo, ASendWaitingForRoomIsCancelled) {
  RingPair p;
  std::vector<char> data(1 << 20, 'x');
  IoDone waited;
  std::size_t before = 0;
  asio::steady_timer later(*p.pair.io, 50ms);
  later.async_wait([&](auto) { p.conn.cancel(); });
  ASSERT_TRUE(p.pair.run([&]() -> asio::awaitable<void> {
    for (;;) {  // fill the socket: nobody reads
      waited = co_await p.conn.send_resuming(data);
      if (waited.ec) break;
      before += waited.bytes;
    }
  }));
  EXPECT_EQ(waited.ec, asio::error::operation_aborted);
  EXPECT_GT(before, 0U);
  EXPECT_EQ(p.ring->in_flight(), 0U);
}

// The standing receive of small messages (keep_receiving): one multishot receive into the ring's
// scratch buffers counts what arrives, and reads, waits and try_read take from the count.
/// Starts `p`'s standing receive; false where the kernel has no scratch buffers.
bool StartStanding(RingPair& p) {
  if (!p.ring || !p.ring->has_scratch()) return false;
  p.conn.keep_receiving();
  return true;
}

/// As TcpPair::run, for a connection whose receive stands: a standing receive is work that keeps
/// the loop running, so the loop stops when the coroutine ends.
template <class F>
bool RunStanding(RingPair& p, F body) {
  bool done = false;
  asio::co_spawn(
      *p.pair.io,
      [&]() -> asio::awaitable<void> {
        co_await body();
        done = true;
        p.pair.io->stop();
      },
      asio::detached);
  p.pair.io->run_for(10s);
  return done;
}

TEST(UringStandingReceive, OneReceiveCountsManyTimesWhatTheScratchBuffersHold) {
  // 8 MiB in 64 KiB pieces, each read by small reads: far more than the scratch buffers hold
  // (they go back as each completion is read), all through the one receive started.
  RingPair p;
  if (!StartStanding(p)) GTEST_SKIP() << "no scratch buffers here";
  constexpr std::size_t kPiece = 64 * 1024;
  constexpr int kPieces = 128;
  std::array<char, 16 * 1024> buf{};
  std::size_t total = 0;
  std::size_t reads = 0;
  ASSERT_TRUE(RunStanding(p, [&]() -> asio::awaitable<void> {
    for (int i = 0; i < kPieces; ++i) {
      p.pair.send(kPiece);
      std::size_t piece = 0;
      while (piece < kPiece) {
        const IoDone got = co_await p.conn.read_resuming(buf);
        EXPECT_FALSE(got.ec) << got.ec.message();
        if (got.ec) co_return;
        EXPECT_LE(got.bytes, buf.size());
        piece += got.bytes;
        ++reads;
      }
      total += piece;
    }
  }));
  EXPECT_EQ(total, kPiece * kPieces);
  EXPECT_GE(reads, total / buf.size());
  EXPECT_EQ(p.conn.receives_started(), 1U);
  EXPECT_EQ(p.ring->in_flight(), 1U);  // still standing
}

TEST(UringStandingReceive, AReceiveNoReadWaitsOnKeepsNoLoopRunning) {
  // A worker's loop ends when its strands are done: a standing receive on a connection still
  // open must not keep it running (the run's end then hung in the worker's join).
  RingPair p;
  if (!StartStanding(p)) GTEST_SKIP() << "no scratch buffers here";
  std::array<char, 64> buf{};
  IoDone first, second;
  const auto start = std::chrono::steady_clock::now();
  p.pair.send(5);
  ASSERT_TRUE(  // the first read starts the receive; the loop ends with the read
      p.pair.run([&]() -> asio::awaitable<void> { first = co_await p.conn.read_resuming(buf); }));
  EXPECT_EQ(first.bytes, 5U);
  EXPECT_EQ(p.ring->in_flight(), 1U);  // it still stands
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s) << "the loop ran on after the read";
  p.pair.send(10);  // what comes now is the next read's
  p.pair.io->restart();
  ASSERT_TRUE(
      p.pair.run([&]() -> asio::awaitable<void> { second = co_await p.conn.read_resuming(buf); }));
  EXPECT_EQ(second.bytes, 10U);
  EXPECT_EQ(p.conn.receives_started(), 1U);
}

TEST(UringStandingReceive, WhatCameBeforeTheReadIsTakenAtOnceThenTheEndOfTheStream) {
  RingPair p;
  if (!StartStanding(p)) GTEST_SKIP() << "no scratch buffers here";
  std::array<char, 64> buf{};
  IoDone waited, after_end;
  IoResult now, beyond, end;
  bool readable = false;
  ASSERT_TRUE(RunStanding(p, [&]() -> asio::awaitable<void> {
    p.pair.send(100);
    auto [ec] = co_await p.conn.wait(Wait::kReadable);  // counted: readable
    readable = !ec;
    now = p.conn.try_read(buf);                   // 64 of the 100, without a system call
    waited = co_await p.conn.read_resuming(buf);  // the other 36
    beyond = p.conn.try_read(buf);                // nothing counted: would block
    p.pair.peer->close();
    after_end = co_await p.conn.read_resuming(buf);
    end = p.conn.try_read(buf);
  }));
  EXPECT_TRUE(readable);
  EXPECT_EQ(now.bytes, 64U);
  EXPECT_FALSE(now.ec);
  EXPECT_EQ(waited.bytes, 36U);
  EXPECT_TRUE(beyond.would_block());
  EXPECT_EQ(after_end.ec, asio::error::eof);
  EXPECT_EQ(end.ec, asio::error::eof);
  EXPECT_EQ(p.ring->in_flight(), 0U);  // the end ended the receive
}

TEST(UringStandingReceive, CancelAndCloseEndAWaitingReadAndTheReceiveStandsAgainAfterACancel) {
  for (const bool close : {false, true}) {
    RingPair p;
    if (!StartStanding(p)) GTEST_SKIP() << "no scratch buffers here";
    std::array<char, 64> buf{};
    IoDone aborted, next;
    asio::steady_timer later(*p.pair.io, 30ms);
    later.async_wait([&](auto) { close ? p.conn.close() : p.conn.cancel(); });
    ASSERT_TRUE(RunStanding(p, [&]() -> asio::awaitable<void> {
      aborted = co_await p.conn.read_resuming(buf);
      if (close) co_return;
      p.conn.keep_receiving();
      p.pair.send(7);
      next = co_await p.conn.read_resuming(buf);
    }));
    EXPECT_EQ(aborted.ec, asio::error::operation_aborted) << (close ? "close" : "cancel");
    if (close) {
      p.pair.io->restart();  // (the cancel of the receive completes on the ring's next pass)
      p.pair.io->run_for(100ms);
      EXPECT_EQ(p.ring->in_flight(), 0U);
      ExpectThePeerSeesTheEnd(p.pair);
    } else {
      EXPECT_EQ(next.bytes, 7U);
      EXPECT_EQ(p.conn.receives_started(), 2U);
    }
  }
}

TEST(UringStandingReceive, AWaitForReadableEndsWhenBytesAreCounted) {
  RingPair p;
  if (!StartStanding(p)) GTEST_SKIP() << "no scratch buffers here";
  bool readable = false;
  IoResult got;
  asio::steady_timer later(*p.pair.io, 30ms);
  later.async_wait([&](auto) { p.pair.send(5); });
  std::array<char, 64> buf{};
  ASSERT_TRUE(RunStanding(p, [&]() -> asio::awaitable<void> {
    auto [ec] = co_await p.conn.wait(Wait::kReadable);
    readable = !ec;
    got = p.conn.try_read(buf);
  }));
  EXPECT_TRUE(readable);
  EXPECT_EQ(got.bytes, 5U);
}

TEST(UringStandingReceive, AnAsioReadTakesFromTheCount) {
  RingPair p;
  if (!StartStanding(p)) GTEST_SKIP() << "no scratch buffers here";
  std::array<char, 64> buf{};
  std::size_t first = 0, second = 0;
  asio::steady_timer later(*p.pair.io);
  ASSERT_TRUE(RunStanding(p, [&]() -> asio::awaitable<void> {
    p.pair.send(10);
    auto [ec1, n1] = co_await p.conn.read(buf);  // counted already, or waits for it
    first = ec1 ? 0 : n1;
    later.expires_after(20ms);
    later.async_wait([&](auto) { p.pair.send(20); });
    auto [ec2, n2] = co_await p.conn.read(buf);  // waits for the count
    second = ec2 ? 0 : n2;
  }));
  EXPECT_EQ(first, 10U);
  EXPECT_EQ(second, 20U);
}

TEST(UringStandingReceive, ItStartsWithTheNextReadNotBesideAReadInFlight) {
  // Small messages are announced (keep_receiving) while a receive of its own is in flight: the
  // bytes that come are that read's, and the standing receive starts with the next read. Two
  // receives at once shared what came, and the read in flight waited on for bytes counted
  // elsewhere.
  RingPair p;
  if (!p.ring->has_scratch()) GTEST_SKIP() << "no scratch buffers here";
  std::array<char, 64> buf{};
  IoDone first, second;
  asio::steady_timer later(*p.pair.io, 30ms);
  later.async_wait([&](auto) {
    p.conn.keep_receiving();
    p.pair.send(9);
  });
  ASSERT_TRUE(RunStanding(p, [&]() -> asio::awaitable<void> {
    first = co_await p.conn.read_resuming(buf);  // one receive of its own
    EXPECT_EQ(p.conn.receives_started(), 0U);
    p.pair.send(4);
    second = co_await p.conn.read_resuming(buf);  // the standing receive's
  }));
  EXPECT_EQ(first.bytes, 9U);
  EXPECT_EQ(second.bytes, 4U);
  EXPECT_EQ(p.conn.receives_started(), 1U);
}

TEST(UringStandingReceive, ARingWithoutScratchBuffersReceivesOneReadAtATime) {
  test::TcpPair pair;
  auto opened = Ring::open(*pair.io, 64, 4, false);
  ASSERT_TRUE(std::holds_alternative<std::unique_ptr<Ring>>(opened));
  auto ring = std::move(std::get<std::unique_ptr<Ring>>(opened));
  EXPECT_FALSE(ring->has_scratch());
  UringTcpConnection conn;
  ASSERT_FALSE(UringTcpConnection::adopt(*pair.ours, *ring, conn));
  conn.keep_receiving();
  EXPECT_EQ(conn.receives_started(), 0U);
  std::array<char, 64> buf{};
  IoDone got;
  ASSERT_TRUE(pair.run([&]() -> asio::awaitable<void> {
    pair.send(12);
    got = co_await conn.read_resuming(buf);
  }));
  EXPECT_EQ(got.bytes, 12U);
  EXPECT_EQ(ring->in_flight(), 0U);
}

TEST(UringStandingReceive, AWaitingReadWhenTheRingShutsDownIsDroppedAndNothingLeaks) {
  // Both kinds of wait on the count: a strand's read and a readiness wait.
  for (const bool readiness : {false, true}) {
    RingPair p;
    if (!StartStanding(p)) GTEST_SKIP() << "no scratch buffers here";
    std::array<char, 64> buf{};
    bool resumed = false;
    auto frames = std::make_shared<int>(0);
    asio::co_spawn(
        *p.pair.io,
        [&, keep = frames]() -> asio::awaitable<void> {
          if (readiness) {
            (void)co_await p.conn.wait(Wait::kReadable);
          } else {
            (void)co_await p.conn.read_resuming(buf);
          }
          resumed = true;
        },
        asio::detached);
    p.pair.io->run_for(50ms);
    EXPECT_EQ(p.ring->in_flight(), 1U) << readiness;
    p.ring->shutdown();
    p.pair.io->run_for(50ms);
    EXPECT_FALSE(resumed) << readiness;
    EXPECT_EQ(frames.use_count(), 1) << "the coroutine's frame was not destroyed: " << readiness;
    p.conn.close();  // (the receive's state goes with the connection now)
  }
}

}  // namespace
}  // namespace volley::transport
