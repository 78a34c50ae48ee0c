// The io_uring engine's TCP connection (transport/uring_tcp_connection.hpp) over a worker's ring
// (transport/ring.hpp), on a real loopback pair: a read that waits completes when data comes (the
// ring's eventfd wakes Asio's loop), a cancel or a close ends it with operation_aborted, a close
// reaches the peer, the loop ends by itself when nothing is in flight, many reads in flight at
// once each get their own completion, and connections take slots of the ring's table of
// registered files while there are any.
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

}  // namespace
}  // namespace volley::transport
