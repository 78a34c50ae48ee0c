// UdpReadPace: a drained stream receiver pauses about as long as a look's worth of arrivals takes
// to come at the measured rate, never for more than a share of its receive buffer, shorter after
// a look that found a gap, and waits in epoll when the stream is slow, stopped, too fast for a
// timer, or its buffer too small.
#include <gtest/gtest.h>

#include <chrono>

#include "volley/transport/udp_read_pace.hpp"

namespace volley::transport {
namespace {

using namespace std::chrono_literals;
using Clock = UdpReadPace::Clock;

constexpr std::uint64_t kBuffer = 212992;  // Linux's default rmem_default
constexpr std::uint64_t kSize = 1472;

/// Drains every `every` with `n` datagrams of kSize taken in between, `times` times; the last
/// pause.
Clock::duration steady(UdpReadPace& pace, Clock::time_point& at, Clock::duration every,
                       std::uint64_t n, int times, bool lost = false) {
  Clock::duration pause{};
  for (int i = 0; i < times; ++i) {
    at += every;
    pace.took(n, n * kSize, lost);
    pause = pace.drained(at, kBuffer);
  }
  return pause;
}

TEST(UdpReadPace, TheFirstDrainWaitsInEpoll) {
  UdpReadPace pace;
  pace.took(40, 40 * kSize, false);
  EXPECT_EQ(pace.drained(Clock::time_point{} + 1s, kBuffer), Clock::duration::zero());
}

TEST(UdpReadPace, AFastStreamPausesForALooksWorthOfDatagrams) {
  UdpReadPace pace;
  Clock::time_point at = Clock::time_point{} + 1s;
  pace.drained(at, kBuffer);
  // 20 datagrams every 50 us: 32 take 80 us.
  EXPECT_EQ(steady(pace, at, 50us, 20, 1), 80us);
  // A buffer of 16 KiB holds a look of 2 datagrams of 1472 bytes (a quarter of it): 5 us.
  at += 50us;
  pace.took(20, 20 * kSize, false);
  EXPECT_EQ(pace.drained(at, 16384), 5us);
}

TEST(UdpReadPace, ASlowStreamOrASmallBufferWaitsInEpoll) {
  UdpReadPace pace;
  Clock::time_point at = Clock::time_point{} + 1s;
  pace.drained(at, kBuffer);
  // 10 datagrams every 100 us: 32 would take 320 us, longer than kMostPause.
  EXPECT_EQ(steady(pace, at, 100us, 10, 1), Clock::duration::zero());
  // A buffer that holds less than two datagrams in a quarter of it.
  at += 50us;
  pace.took(20, 20 * kSize, false);
  EXPECT_EQ(pace.drained(at, 8192), Clock::duration::zero());
  // Super-buffers of 64 KiB: a quarter of the default buffer holds none.
  at += 50us;
  pace.took(4, 4 * 65536, false);
  EXPECT_EQ(pace.drained(at, kBuffer), Clock::duration::zero());
  // Nothing taken since the last drain.
  at += 50us;
  EXPECT_EQ(pace.drained(at, kBuffer), Clock::duration::zero());
}

TEST(UdpReadPace, LooksThatFindGapsShortenThePausesUntilOneDoesNot) {
  UdpReadPace pace;
  Clock::time_point at = Clock::time_point{} + 1s;
  pace.drained(at, kBuffer);
  EXPECT_EQ(steady(pace, at, 50us, 20, 1, /*lost=*/true), 40us);
  EXPECT_EQ(steady(pace, at, 50us, 20, 1, true), 20us);
  EXPECT_EQ(steady(pace, at, 50us, 20, 1, false), 40us);
  EXPECT_EQ(steady(pace, at, 50us, 20, 1, false), 80us);
  EXPECT_EQ(steady(pace, at, 50us, 20, 1, false), 80us);
  // However many gaps, the pause is at most kMostShrink times shorter; below kLeastPause the
  // receiver waits in epoll.
  EXPECT_EQ(steady(pace, at, 640us, 32, 20, true), 10us);
  EXPECT_EQ(steady(pace, at, 64us, 32, 1, true), Clock::duration::zero());
}

TEST(UdpReadPace, APauseThatFoundNothingWaitsInEpollAndMeasuresAnew) {
  UdpReadPace pace;
  Clock::time_point at = Clock::time_point{} + 1s;
  pace.drained(at, kBuffer);
  ASSERT_EQ(steady(pace, at, 50us, 20, 3), 80us);
  pace.idle();
  at += 10ms;
  pace.took(1, kSize, false);
  EXPECT_EQ(pace.drained(at, kBuffer), Clock::duration::zero());
  EXPECT_EQ(steady(pace, at, 50us, 20, 1), 80us);
}

}  // namespace
}  // namespace volley::transport
