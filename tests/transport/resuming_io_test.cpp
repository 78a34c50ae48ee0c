// TcpConnection::read_resuming (transport/resuming_io.hpp): the drained read as an operation a
// coroutine co_awaits directly, its completion resuming the coroutine from the reactor in place.
// These tests check what the strand relies on: the bytes and the errors arrive as with read(), a
// wake-up is never lost, a cancel ends the read, and a read still queued when its io_context goes
// away unwinds the coroutine (its frame destroyed, nothing leaked: the sanitizer build checks).
// The instructions saved are counted by bench/callgrind_per_transaction.sh -x callgrind.
#include <array>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include "volley/transport/tcp_connection.hpp"
#include "support/tcp_pair.hpp"

namespace volley::transport {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

using Pair = test::TcpPair;

TEST(ResumingIo, ReadsWhatIsThereAndWaitsForWhatComesLater) {
  Pair p;
  std::array<char, 64> buf{};
  IoDone first, second, third, fourth;
  asio::steady_timer later(*p.io);
  EXPECT_TRUE(p.run([&]() -> asio::awaitable<void> {
    p.send(10);
    first = co_await p.ours->read_resuming(buf);  // short: the socket is drained
    p.send(5);                                    // arrives before the next read is even started
    second = co_await p.ours->read_resuming(buf);
    later.expires_after(20ms);  // and data that arrives while the read is queued
    later.async_wait([&](const boost::system::error_code&) { p.send(100); });
    third = co_await p.ours->read_resuming(buf);  // fills the buffer: the rest stays
    fourth = co_await p.ours->read_resuming(buf);
  }));
  EXPECT_FALSE(first.ec);
  EXPECT_EQ(first.bytes, 10U);
  EXPECT_EQ(second.bytes, 5U);
  EXPECT_EQ(third.bytes, 64U);
  EXPECT_EQ(fourth.bytes, 36U);
  EXPECT_FALSE(fourth.ec);
}

TEST(ResumingIo, EndOfFileAndCancelEndAQueuedRead) {
  Pair p;
  std::array<char, 64> buf{};
  IoDone cancelled, closed;
  asio::steady_timer later(*p.io);
  EXPECT_TRUE(p.run([&]() -> asio::awaitable<void> {
    later.expires_after(20ms);
    later.async_wait([&](const boost::system::error_code&) { p.ours->cancel(); });
    cancelled = co_await p.ours->read_resuming(buf);
    later.expires_after(20ms);
    later.async_wait([&](const boost::system::error_code&) { p.peer->close(); });
    closed = co_await p.ours->read_resuming(buf);
  }));
  EXPECT_EQ(cancelled.ec, asio::error::operation_aborted);
  EXPECT_EQ(closed.ec, asio::error::eof);
  EXPECT_EQ(closed.bytes, 0U);
}

TEST(ResumingIo, AReadQueuedWhenTheContextGoesAwayUnwindsTheCoroutine) {
  Pair p;
  std::array<char, 64> buf{};
  bool resumed = false;
  auto alive = std::make_shared<int>(0);  // held by the coroutine's frame
  asio::co_spawn(
      *p.io,
      [&, held = alive]() -> asio::awaitable<void> {
        co_await p.ours->read_resuming(buf);
        resumed = true;
      },
      asio::detached);
  p.io->run_for(20ms);  // the read is queued, nothing comes
  EXPECT_EQ(alive.use_count(), 2);
  p.ours.reset();
  p.peer.reset();
  p.io.reset();
  EXPECT_FALSE(resumed);
  EXPECT_EQ(alive.use_count(), 1);  // the frame was destroyed
}

// Two coroutines in a ping-pong on one event loop, every read through read_resuming: no
// wake-up is lost (a lost one would hang the loop until the guard).
TEST(ResumingIo, APingPongOfManyRoundTripsCompletesEveryRoundTrip) {
  constexpr int kRoundTrips = 2000;
  Pair p;
  p.peer->non_blocking(true);
  TcpConnection other(std::move(*p.peer));
  int done = 0;
  auto side = [&](TcpConnection& c, bool starts) -> asio::awaitable<void> {
    std::array<char, 64> out{};
    std::array<char, 256> in{};
    for (int i = 0; i < kRoundTrips; ++i) {
      if (starts) c.try_write(out);
      std::size_t got = 0;
      while (got < out.size()) {
        const IoDone r = co_await c.read_resuming(std::span<char>(in).first(in.size() - got));
        if (r.ec) co_return;
        got += r.bytes;
      }
      if (!starts) c.try_write(out);
      if (starts) ++done;
    }
  };
  asio::co_spawn(*p.io, side(*p.ours, true), asio::detached);
  asio::co_spawn(*p.io, side(other, false), asio::detached);
  p.io->run_for(60s);
  EXPECT_EQ(done, kRoundTrips);
}

}  // namespace
}  // namespace volley::transport
