// UdpConnection keeps its socket out of epoll while it has no need to wait (see kLeaveAfter):
// these tests check that it sends and receives out of the reactor, that a wait puts it back
// without losing a datagram that arrived while it was out (a wait for an edge that already came
// would hang), that it leaves again after kLeaveAfter datagrams without a wait, and that it owns
// its descriptor through moves and close. The kernel cost saved is measured by
// bench/udp_vs_iperf3.sh (docs/performance.md).
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <optional>
#include <thread>
#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <gtest/gtest.h>

#include "volley/transport/udp_connection.hpp"

namespace volley::transport {
namespace {

namespace asio = boost::asio;
using asio::ip::udp;
using namespace std::chrono_literals;

/// A connected loopback pair: `ours` (a UdpConnection, non-blocking, as a strand's) and `peer`
/// (a plain blocking socket).
struct UdpPair {
  asio::io_context context;
  std::optional<UdpConnection> ours;
  udp::socket peer{context};

  UdpPair() {
    const udp::endpoint any(asio::ip::make_address("127.0.0.1"), 0);
    peer.open(udp::v4());
    peer.bind(any);
    udp::socket socket(context);
    socket.open(udp::v4());
    socket.bind(any);
    socket.connect(peer.local_endpoint());
    peer.connect(socket.local_endpoint());
    socket.non_blocking(true);
    ours.emplace(std::move(socket));
  }

  /// Waits on `ours` for `what`, running the context for at most `limit`; true if it completed
  /// without error.
  bool wait(Wait what, std::chrono::milliseconds limit = 2000ms) {
    std::optional<boost::system::error_code> result;
    asio::co_spawn(
        context,
        [&]() -> asio::awaitable<void> {
          auto [ec] = co_await ours->wait(what);
          result = ec;
        },
        asio::detached);
    context.restart();
    context.run_for(limit);
    if (!result) {  // the hang guard: cancel, and let the coroutine finish
      ours->cancel();
      context.restart();
      context.run_for(1s);
      return false;
    }
    return !*result;
  }
};

TEST(UdpConnection, SendsAndReceivesOutOfTheReactor) {
  UdpPair p;
  ASSERT_FALSE(p.ours->out_of_reactor());
  ASSERT_FALSE(p.ours->leave_reactor());
  EXPECT_TRUE(p.ours->out_of_reactor());
  const std::array<char, 100> out{'x'};
  for (int i = 0; i < 3 * static_cast<int>(UdpConnection::kLeaveAfter); ++i) {
    const IoResult r = p.ours->try_write(out);
    ASSERT_FALSE(r.ec) << r.ec.message();
    EXPECT_EQ(r.bytes, out.size());
    std::array<char, 200> in{};
    EXPECT_EQ(p.peer.receive(asio::buffer(in)), out.size());
  }
  EXPECT_TRUE(p.ours->out_of_reactor());
  std::array<char, 200> in{};
  EXPECT_TRUE(p.ours->try_read(in).would_block());
  p.peer.send(asio::buffer(out.data(), 7));
  // Without a wait the datagram is there to read as soon as it is sent (loopback delivers it in
  // the sender's system call).
  const IoResult r = p.ours->try_read(in);
  ASSERT_FALSE(r.ec) << r.ec.message();
  EXPECT_EQ(r.bytes, 7U);
  EXPECT_TRUE(p.ours->out_of_reactor());
}

TEST(UdpConnection, AWaitSeesADatagramThatCameWhileOutOfTheReactor) {
  UdpPair p;
  ASSERT_FALSE(p.ours->leave_reactor());
  std::array<char, 64> in{};
  ASSERT_TRUE(p.ours->try_read(in).would_block());
  const std::array<char, 5> out{'a', 'b', 'c', 'd', 'e'};
  p.peer.send(asio::buffer(out));  // before the wait: its edge came while out of epoll
  ASSERT_TRUE(p.wait(Wait::kReadable)) << "the wait missed a datagram already queued";
  EXPECT_FALSE(p.ours->out_of_reactor());
  const IoResult r = p.ours->try_read(in);
  ASSERT_FALSE(r.ec) << r.ec.message();
  EXPECT_EQ(r.bytes, out.size());
  // And one that comes during the wait.
  ASSERT_TRUE(p.ours->try_read(in).would_block());
  std::thread late([&] {
    std::this_thread::sleep_for(20ms);
    p.peer.send(asio::buffer(out));
  });
  const bool woke = p.wait(Wait::kReadable);
  late.join();
  ASSERT_TRUE(woke);
  EXPECT_EQ(p.ours->try_read(in).bytes, out.size());
}

TEST(UdpConnection, LeavesTheReactorAfterKLeaveAfterDatagramsWithoutAWait) {
  UdpPair p;
  ASSERT_FALSE(p.ours->leave_reactor());
  ASSERT_TRUE(p.wait(Wait::kWritable));  // the wait puts it back
  ASSERT_FALSE(p.ours->out_of_reactor());
  const std::array<char, 10> out{};
  std::array<char, 64> in{};
  for (std::uint32_t i = 1; i <= UdpConnection::kLeaveAfter; ++i) {
    ASSERT_FALSE(p.ours->try_write(out).ec);
    p.peer.receive(asio::buffer(in));
    EXPECT_EQ(p.ours->out_of_reactor(), i == UdpConnection::kLeaveAfter) << "datagram " << i;
  }
  // A receiver that waits every few datagrams stays in the reactor.
  ASSERT_TRUE(p.wait(Wait::kWritable));
  for (int round = 0; round < 3; ++round) {
    for (std::uint32_t i = 0; i + 1 < UdpConnection::kLeaveAfter; ++i) {
      p.peer.send(asio::buffer(out));
      ASSERT_FALSE(p.ours->try_read(in).ec);
    }
    ASSERT_TRUE(p.ours->try_read(in).would_block());
    p.peer.send(asio::buffer(out));
    ASSERT_TRUE(p.wait(Wait::kReadable));
    ASSERT_FALSE(p.ours->try_read(in).ec);
    EXPECT_FALSE(p.ours->out_of_reactor()) << "round " << round;
  }
}

TEST(UdpConnection, OwnsItsDescriptorThroughMovesAndClose) {
  UdpPair p;
  ASSERT_FALSE(p.ours->leave_reactor());
  UdpConnection moved(std::move(*p.ours));
  EXPECT_TRUE(moved.out_of_reactor());
  EXPECT_FALSE(p.ours->out_of_reactor());
  p.ours.reset();  // the moved-from one closes nothing
  const std::array<char, 3> out{'o', 'k', '!'};
  ASSERT_FALSE(moved.try_write(out).ec);
  std::array<char, 8> in{};
  EXPECT_EQ(p.peer.receive(asio::buffer(in)), out.size());
  // The descriptor is the socket's once the connection is back in the reactor.
  const int fd = moved.socket().native_handle();
  EXPECT_FALSE(moved.out_of_reactor());
  ASSERT_FALSE(moved.leave_reactor());
  moved.close();
  errno = 0;
  EXPECT_EQ(::fcntl(fd, F_GETFD), -1);
  EXPECT_EQ(errno, EBADF);
  EXPECT_TRUE(moved.try_write(out).ec);  // closed: an error, not a crash
}

}  // namespace
}  // namespace volley::transport
