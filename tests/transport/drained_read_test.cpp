// TcpConnection::read through transport/drained_read.hpp: a short read tells Asio's reactor the
// socket is drained, so the next read waits for epoll's edge instead of failing with EAGAIN.
// These tests check that no wake-up is lost by it (a read waiting for an edge that already came
// would hang) and that a read filling its buffer still leaves the rest for the next one. The
// system calls saved are counted by bench/callgrind_per_transaction.sh -x strace.
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <tuple>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include "volley/transport/tcp_connection.hpp"
#include "support/tcp_pair.hpp"

namespace {
/// recv() calls that found nothing to read (EAGAIN), in this test binary.
std::atomic<int> recv_would_block{0};
}  // namespace

// This binary's own recv and recvmsg (an executable's definition comes before libc's): Asio's
// reads and volley's (transport::receive_once) go through ::recv, Asio's scatter reads through
// ::recvmsg, so the reads that fail with EAGAIN can be counted without strace.
extern "C" ssize_t recv(int fd, void* buf, std::size_t n, int flags) {
  const long r = ::syscall(SYS_recvfrom, fd, buf, n, flags, nullptr, nullptr);
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) ++recv_would_block;
  return static_cast<ssize_t>(r);
}
extern "C" ssize_t recvmsg(int fd, msghdr* msg, int flags) {
  const long r = ::syscall(SYS_recvmsg, fd, msg, flags);
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) ++recv_would_block;
  return static_cast<ssize_t>(r);
}

namespace volley::transport {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

using Pair = test::TcpPair;

TEST(DrainedRead, DataSentAfterAShortReadCompletesTheNextRead) {
  Pair p;
  std::array<char, 64> buf{};
  std::size_t first = 0;
  std::size_t second = 0;
  std::size_t third = 0;
  asio::steady_timer later(*p.io);
  EXPECT_TRUE(p.run([&]() -> asio::awaitable<void> {
    p.send(10);
    auto [ec1, n1] = co_await p.ours->read(buf);  // short: the socket is drained
    first = n1;
    p.send(5);  // arrives before the next read is even started
    auto [ec2, n2] = co_await p.ours->read(buf);
    second = n2;
    // And data that arrives while the read is queued.
    later.expires_after(20ms);
    later.async_wait([&](const boost::system::error_code&) { p.send(7); });
    auto [ec3, n3] = co_await p.ours->read(buf);
    third = n3;
  }));
  EXPECT_EQ(first, 10U);
  EXPECT_EQ(second, 5U);
  EXPECT_EQ(third, 7U);
}

TEST(DrainedRead, AReadThatFillsItsBufferLeavesTheRestForTheNextRead) {
  Pair p;
  std::array<char, 64> buf{};
  std::size_t first = 0;
  std::size_t second = 0;
  EXPECT_TRUE(p.run([&]() -> asio::awaitable<void> {
    p.send(100);
    auto [ec1, n1] = co_await p.ours->read(buf);
    first = n1;
    auto [ec2, n2] = co_await p.ours->read(buf);
    second = n2;
  }));
  EXPECT_EQ(first, 64U);
  EXPECT_EQ(second, 36U);
}

TEST(DrainedRead, EndOfFileEndsAQueuedRead) {
  Pair p;
  std::array<char, 64> buf{};
  boost::system::error_code last;
  asio::steady_timer later(*p.io);
  EXPECT_TRUE(p.run([&]() -> asio::awaitable<void> {
    p.send(3);
    co_await p.ours->read(buf);
    later.expires_after(20ms);
    later.async_wait([&](const boost::system::error_code&) { p.peer->close(); });
    auto [ec, n] = co_await p.ours->read(buf);
    last = ec;
  }));
  EXPECT_EQ(last, asio::error::eof);
}

// Data and the end of the stream that come together raise one edge; the read of the data is
// short, and a read that then waited for another edge would wait forever.
/// 100 bytes and the end of the stream, sent together 20 ms after two reads of a drained socket
/// (its wake-up mark at `mark`) were started one after the other: what each returned.
struct DataThenEnd {
  bool ended = false;  ///< both reads returned within the hang guard
  std::size_t first = 0;
  boost::system::error_code second;
};
DataThenEnd read_data_then_end(std::size_t mark) {
  Pair p;
  std::array<char, 64 * 1024> buf{};
  EXPECT_TRUE(p.ours->read_now(buf).would_block());  // drained: the next read waits for epoll
  p.ours->wake_after(mark);
  DataThenEnd r;
  asio::steady_timer later(*p.io);
  r.ended = p.run([&]() -> asio::awaitable<void> {
    later.expires_after(20ms);
    later.async_wait([&](const boost::system::error_code&) {
      p.send(100);
      p.peer->close();
    });
    auto [ec1, n1] = co_await p.ours->read(buf);
    r.first = n1;
    auto [ec2, n2] = co_await p.ours->read(buf);
    r.second = ec2;
  });
  return r;
}

TEST(DrainedRead, DataAndTheEndOfTheStreamTogetherEndTheNextRead) {
  const DataThenEnd r = read_data_then_end(1);
  EXPECT_TRUE(r.ended);
  EXPECT_EQ(r.first, 100U);
  EXPECT_EQ(r.second, asio::error::eof);
}

// The same through read_now, as a strand reads it: read_now, then a read through the event loop
// when read_now found nothing. Before any epoll_wait the reactor has not seen the FIN, so the short
// read may mark the socket drained; the FIN's edge, still to be reported, ends the next read.
TEST(ReadNow, DataAndTheEndOfTheStreamTogetherAreBothRead) {
  Pair p;
  std::array<char, 64 * 1024> buf{};
  p.send(100);
  p.peer->close();
  const IoResult data = p.ours->read_now(buf);
  EXPECT_EQ(data.bytes, 100U);
  EXPECT_FALSE(data.ec);
  boost::system::error_code end = p.ours->read_now(buf).ec;
  if (end == asio::error::would_block) {
    EXPECT_TRUE(p.run([&]() -> asio::awaitable<void> {
      auto [ec, n] = co_await p.ours->read(buf);
      end = ec;
    }));
  }
  EXPECT_EQ(end, asio::error::eof);
}

// Once epoll has reported the FIN (EPOLLRDHUP), a short read does not mark the socket drained:
// the next read is tried at once and sees the end of the stream.
TEST(ReadNow, AfterTheEventLoopSawTheEndAShortReadLeavesTheNextReadToTry) {
  Pair p;
  std::array<char, 64 * 1024> buf{};
  p.send(100);
  p.peer->close();
  auto busy = asio::make_work_guard(*p.io);
  p.io->poll();  // epoll reports data and the FIN together
  EXPECT_EQ(p.ours->read_now(buf).bytes, 100U);
  EXPECT_EQ(p.ours->read_now(buf).ec, asio::error::eof);
}

// A FIN that comes after epoll reported the data (so the short read of that data marks the socket
// drained) raises an edge of its own: the read queued next ends with the end of the stream.
TEST(DrainedRead, TheEndOfTheStreamAfterTheDataWasReportedEndsTheNextRead) {
  Pair p;
  std::array<char, 64 * 1024> buf{};
  p.send(100);
  auto busy = asio::make_work_guard(*p.io);
  p.io->poll();     // epoll reports the data alone
  p.peer->close();  // the FIN is queued behind it before the read
  recv_would_block = 0;
  EXPECT_EQ(p.ours->read_now(buf).bytes, 100U);  // short, no EPOLLRDHUP seen: drained
  EXPECT_TRUE(p.ours->read_now(buf).would_block());
  EXPECT_EQ(recv_would_block.load(), 0);  // no read was tried
  busy.reset();
  p.io->restart();
  boost::system::error_code end;
  EXPECT_TRUE(p.run([&]() -> asio::awaitable<void> {
    auto [ec, n] = co_await p.ours->read(buf);
    end = ec;
  }));
  EXPECT_EQ(end, asio::error::eof);
}

// A read that fills its buffer may have left more behind it: the next read is tried at once
// (found nothing: one EAGAIN), then waits for the edge.
TEST(ReadNow, AFullReadLetsTheNextReadTryAtOnce) {
  Pair p;
  std::array<char, 64> buf{};
  p.send(64);
  recv_would_block = 0;
  EXPECT_EQ(p.ours->read_now(buf).bytes, 64U);
  EXPECT_TRUE(p.ours->read_now(buf).would_block());
  EXPECT_TRUE(p.ours->read_now(buf).would_block());
  EXPECT_EQ(recv_would_block.load(), 1);
}

TEST(DrainedRead, CancelEndsAQueuedRead) {
  Pair p;
  std::array<char, 64> buf{};
  boost::system::error_code last;
  asio::steady_timer later(*p.io);
  EXPECT_TRUE(p.run([&]() -> asio::awaitable<void> {
    p.send(3);
    co_await p.ours->read(buf);
    later.expires_after(20ms);
    later.async_wait([&](const boost::system::error_code&) { p.ours->cancel(); });
    auto [ec, n] = co_await p.ours->read(buf);
    last = ec;
  }));
  EXPECT_EQ(last, asio::error::operation_aborted);
}

// TcpConnection::read_now: a reader that finds data reads it in place, without the event loop;
// once a read was short (the socket drained) it makes no system call until epoll reports an edge,
// and an edge that came meanwhile is not lost.
TEST(ReadNow, ReadsInPlaceUntilAShortReadThenWaitsForTheEdgeWithoutASystemCall) {
  Pair p;
  std::array<char, 64> buf{};
  p.send(100);
  recv_would_block = 0;
  IoResult full = p.ours->read_now(buf);
  // Loopback delivers in the sender's system call: the bytes are there already.
  EXPECT_EQ(full.bytes, 64U);
  EXPECT_FALSE(full.ec);
  const IoResult rest = p.ours->read_now(buf);  // short: drained
  EXPECT_EQ(rest.bytes, 36U);
  EXPECT_FALSE(rest.ec);
  p.send(5);  // no epoll_wait has run since: read_now does not know of it
  EXPECT_TRUE(p.ours->read_now(buf).would_block());
  EXPECT_EQ(recv_would_block.load(), 0);  // no read was tried
  std::size_t later = 0;
  EXPECT_TRUE(p.run([&]() -> asio::awaitable<void> {
    auto [ec, n] = co_await p.ours->read(buf);  // the edge of those 5 bytes ends it
    later = n;
  }));
  EXPECT_EQ(later, 5U);
  EXPECT_EQ(recv_would_block.load(), 0);
}

TEST(ReadNow, AnEdgeTheEventLoopSawLetsTheNextReadNowRead) {
  Pair p;
  std::array<char, 64> buf{};
  p.send(10);
  EXPECT_EQ(p.ours->read_now(buf).bytes, 10U);  // short: drained
  p.send(20);
  // (Work outstanding, as a worker with strands has: else poll() returns at once.)
  auto busy = asio::make_work_guard(*p.io);
  p.io->poll();  // epoll_wait reports the edge: the reactor may read at once again
  const IoResult again = p.ours->read_now(buf);
  EXPECT_EQ(again.bytes, 20U);
  p.peer->close();
  p.io->poll();
  EXPECT_EQ(p.ours->read_now(buf).ec, asio::error::eof);
}

TEST(ReadNow, NothingThereFailsOnceThenWaitsForTheEdge) {
  Pair p;
  std::array<char, 64> buf{};
  recv_would_block = 0;
  EXPECT_TRUE(p.ours->read_now(buf).would_block());  // tried: a new socket may have data
  EXPECT_TRUE(p.ours->read_now(buf).would_block());  // not tried again
  EXPECT_EQ(recv_would_block.load(), 1);
  asio::steady_timer later(*p.io);
  std::size_t got = 0;
  EXPECT_TRUE(p.run([&]() -> asio::awaitable<void> {
    later.expires_after(20ms);
    later.async_wait([&](const boost::system::error_code&) { p.send(7); });
    auto [ec, n] = co_await p.ours->read(buf);
    got = n;
  }));
  EXPECT_EQ(got, 7U);
  EXPECT_EQ(recv_would_block.load(), 1);
}

// TcpConnection::wake_after: a read waiting for a whole message is woken once it is there, not
// at each arrival, and never kept waiting past the end of the stream or a lowered mark.
int socket_wake_mark(TcpConnection& c) {
  int mark = 0;
  socklen_t len = sizeof mark;
  ::getsockopt(c.socket().native_handle(), SOL_SOCKET, SO_RCVLOWAT, &mark, &len);
  return mark;
}

TEST(WakeAfter, SetsTheSocketsMarkOnlyWithinItsBounds) {
  Pair p;
  EXPECT_EQ(socket_wake_mark(*p.ours), 1);
  p.ours->wake_after(20'000);
  EXPECT_EQ(socket_wake_mark(*p.ours), 20'000);
  p.ours->wake_after(10 * TcpConnection::kMaxWakeAfter);
  EXPECT_EQ(socket_wake_mark(*p.ours), static_cast<int>(TcpConnection::kMaxWakeAfter));
  p.ours->wake_after(0);
  EXPECT_EQ(socket_wake_mark(*p.ours), 1);
}

TEST(WakeAfter, AWaitingReadIsWokenWhenTheMarkIsReachedNotBefore) {
  Pair p;
  std::array<char, 64 * 1024> buf{};
  EXPECT_TRUE(p.ours->read_now(buf).would_block());  // drained: the next read waits for epoll
  p.ours->wake_after(30'000);
  p.send(10'000);  // there before the read starts: without the mark it would end the read
  std::size_t got = 0;
  asio::steady_timer later(*p.io);
  EXPECT_TRUE(p.run([&]() -> asio::awaitable<void> {
    later.expires_after(50ms);
    later.async_wait([&](const boost::system::error_code&) { p.send(20'000); });
    auto [ec, n] = co_await p.ours->read(buf);
    got = n;
  }));
  EXPECT_EQ(got, 30'000U);  // one read: woken once, with the whole message there
}

TEST(WakeAfter, EndOfStreamWakesAReadBelowTheMark) {
  const DataThenEnd r = read_data_then_end(30'000);
  EXPECT_TRUE(r.ended);
  EXPECT_EQ(r.first, 100U);
  EXPECT_EQ(r.second, asio::error::eof);
}

TEST(WakeAfter, LoweringTheMarkWakesAReadForWhatIsAlreadyThere) {
  Pair p;
  std::array<char, 64 * 1024> buf{};
  EXPECT_TRUE(p.ours->read_now(buf).would_block());
  p.ours->wake_after(30'000);
  std::size_t got = 0;
  asio::steady_timer send(*p.io);
  asio::steady_timer lower(*p.io);
  EXPECT_TRUE(p.run([&]() -> asio::awaitable<void> {
    send.expires_after(20ms);
    send.async_wait([&](const boost::system::error_code&) { p.send(5'000); });
    lower.expires_after(60ms);
    lower.async_wait([&](const boost::system::error_code&) { p.ours->wake_after(5'000); });
    auto [ec, n] = co_await p.ours->read(buf);
    got = n;
  }));
  EXPECT_EQ(got, 5'000U);
}

/// Round trips of 64 bytes between two connections on one event loop, as a master and a slave
/// strand on one worker, reading with TcpConnection::read or (`asio_own`) Asio's async_read_some;
/// returns how many completed, and counts the reads that failed with EAGAIN in `would_block`.
int ping_pong(int round_trips, bool asio_own, int& would_block) {
  Pair p;
  p.peer->non_blocking(true);
  TcpConnection other(std::move(*p.peer));
  int done = 0;
  auto side = [&](TcpConnection& c, bool starts) -> asio::awaitable<void> {
    std::array<char, 64> out{};
    std::array<char, 256> in{};
    for (int i = 0; i < round_trips; ++i) {
      if (starts) c.try_write(out);
      std::size_t got = 0;
      while (got < out.size()) {
        const auto into = std::span<char>(in).first(in.size() - got);
        std::tuple<boost::system::error_code, std::size_t> r;
        if (asio_own) {  // (not `?:`: GCC 12 miscompiles co_await inside it)
          r = co_await c.socket().async_read_some(asio::buffer(into.data(), into.size()),
                                                  kWaitToken);
        } else {
          r = co_await c.read(into);
        }
        if (std::get<0>(r)) co_return;
        got += std::get<1>(r);
      }
      if (!starts) c.try_write(out);
      if (starts) ++done;
    }
  };
  recv_would_block = 0;
  asio::co_spawn(*p.io, side(*p.ours, true), asio::detached);
  asio::co_spawn(*p.io, side(other, false), asio::detached);
  p.io->run_for(60s);
  would_block = recv_would_block.load();
  return done;
}

// The defect this read removes, seen through the same counter: Asio's own read, tried at once
// after every edge, fails with EAGAIN about once per read (the instrument works).
TEST(DrainedRead, AsiosOwnReadFailsWithEagainAboutOncePerRead) {
  constexpr int kRoundTrips = 500;
  int would_block = 0;
  EXPECT_EQ(ping_pong(kRoundTrips, true, would_block), kRoundTrips);
  EXPECT_GE(would_block, kRoundTrips);
}

// A lost edge on either side would stop the exchange before its count. Every read is short (64
// bytes into 256), so after the first on each end (a new descriptor is tried at once) none is
// tried before its edge: no read fails with EAGAIN.
TEST(DrainedRead, APingPongOfManyRoundTripsLosesNoWakeUpAndNoReadFindsNothing) {
  constexpr int kRoundTrips = 2000;
  int would_block = 0;
  EXPECT_EQ(ping_pong(kRoundTrips, false, would_block), kRoundTrips);
  EXPECT_LE(would_block, 2);
}

}  // namespace
}  // namespace volley::transport
