// UdpReadPace: a drained stream receiver pauses about as long as a look's worth of arrivals takes
// to come at the measured rate (the datagrams the kernel dropped included), never for more than a
// share of its receive buffer, shorter after a look that came on time after a pause yet found a
// gap, and waits in epoll when the stream is slow, stopped, too fast for a timer, or its buffer too
// small.
#include <gtest/gtest.h>

#include <chrono>

#include "volley/transport/udp_read_pace.hpp"

namespace volley::transport {
namespace {

using namespace std::chrono_literals;
using Clock = UdpReadPace::Clock;

constexpr std::uint64_t kBuffer = 212992;  // Linux's default rmem_default
constexpr std::uint64_t kSize = 1472;

/// Drains every `every` with `n` datagrams of kSize taken in between (`lost` missing before
/// them), `times` times; the last pause.
Clock::duration steady(UdpReadPace& pace, Clock::time_point& at, Clock::duration every,
                       std::uint64_t n, int times, std::uint64_t lost = 0) {
  Clock::duration pause{};
  for (int i = 0; i < times; ++i) {
    at += every;
    pace.took(n, n, n * kSize, lost);
    pause = pace.drained(at, kBuffer);
  }
  return pause;
}

/// A pace past its first drain.
Clock::time_point started(UdpReadPace& pace) {
  const Clock::time_point at = Clock::time_point{} + 1s;
  pace.drained(at, kBuffer);
  return at;
}

TEST(UdpReadPace, TheFirstDrainWaitsInEpoll) {
  UdpReadPace pace;
  pace.took(40, 40, 40 * kSize, 0);
  EXPECT_EQ(pace.drained(Clock::time_point{} + 1s, kBuffer), Clock::duration::zero());
}

TEST(UdpReadPace, AFastStreamPausesForALooksWorthOfArrivals) {
  UdpReadPace pace;
  Clock::time_point at = started(pace);
  // 20 datagrams every 50 us: 32 take 80 us.
  EXPECT_EQ(steady(pace, at, 50us, 20, 1), 80us);
  // A buffer of 16 KiB holds a look of 2 datagrams of 1472 bytes (a quarter of it): 5 us.
  at += 50us;
  pace.took(20, 20, 20 * kSize, 0);
  EXPECT_EQ(pace.drained(at, 16384), 5us);
}

TEST(UdpReadPace, TheRateCountsWhatTheKernelDropped) {
  UdpReadPace pace;
  Clock::time_point at = started(pace);
  // 20 taken and 20 dropped in 50 us: 32 arrivals take 40 us.
  EXPECT_EQ(steady(pace, at, 50us, 20, 1, 20), 40us);
  // Super-buffers of 44 datagrams: 2 taken and 88 datagrams (2 super-buffers) dropped in 20 us
  // (after a wait in epoll); 32 take 160 us.
  UdpReadPace gso;
  at = started(gso) + 20us;
  gso.took(2, 88, 2 * 44 * kSize, 88);
  EXPECT_EQ(gso.drained(at, 16 * 1024 * 1024), 160us);
}

TEST(UdpReadPace, ASlowStreamOrASmallBufferWaitsInEpoll) {
  UdpReadPace pace;
  Clock::time_point at = started(pace);
  // 10 datagrams every 100 us: 32 would take 320 us, longer than kMostPause.
  EXPECT_EQ(steady(pace, at, 100us, 10, 1), Clock::duration::zero());
  // A buffer that holds less than two datagrams in a quarter of it.
  at += 50us;
  pace.took(20, 20, 20 * kSize, 0);
  EXPECT_EQ(pace.drained(at, 8192), Clock::duration::zero());
  // Super-buffers of 64 KiB: a quarter of the default buffer holds none.
  at += 50us;
  pace.took(4, 4 * 44, 4 * 65536, 0);
  EXPECT_EQ(pace.drained(at, kBuffer), Clock::duration::zero());
  // Nothing taken since the last drain.
  at += 50us;
  EXPECT_EQ(pace.drained(at, kBuffer), Clock::duration::zero());
}

/// A look `pause` after the last, at 0.4 datagrams per us, `lost` of them dropped.
Clock::duration look_after(UdpReadPace& pace, Clock::time_point& at, Clock::duration pause,
                           std::uint64_t lost) {
  at += pause;
  const auto came = static_cast<std::uint64_t>(pause * 2 / 5us);
  pace.took(came - lost, came - lost, (came - lost) * kSize, lost);
  return pace.drained(at, kBuffer);
}

TEST(UdpReadPace, ALookOnTimeAfterAPauseThatFoundAGapShortensThePauses) {
  UdpReadPace pace;
  Clock::time_point at = started(pace);
  ASSERT_EQ(steady(pace, at, 50us, 20, 1), 80us);
  EXPECT_EQ(look_after(pace, at, 80us, 4), 40us);
  EXPECT_EQ(look_after(pace, at, 40us, 2), 20us);
  // Clean looks on time make them longer again.
  EXPECT_EQ(look_after(pace, at, 20us, 0), 40us);
  EXPECT_EQ(look_after(pace, at, 40us, 0), 80us);
  EXPECT_EQ(look_after(pace, at, 80us, 0), 80us);
}

TEST(UdpReadPace, AGapAfterALateLookOrAWaitInEpollIsNotThePauses) {
  UdpReadPace pace;
  Clock::time_point at = started(pace);
  // After a wait in epoll (the first look), loss does not shorten the next pause.
  EXPECT_EQ(steady(pace, at, 50us, 16, 1, 4), 80us);
  // A look that came 1 ms after an 80 us pause: the receiver waited for a CPU. 90 arrivals
  // taken, 310 dropped: 32 of 400 per ms.
  at += 1ms;
  pace.took(90, 90, 90 * kSize, 310);
  EXPECT_EQ(pace.drained(at, kBuffer), 80us);
}

TEST(UdpReadPace, AStreamThatOverflowsTheBufferHoweverShortThePauseWaitsInEpoll) {
  UdpReadPace pace;
  Clock::time_point at = started(pace);
  // 32 datagrams every 160 us; every look, on time, finds one missing: the pause halves each
  // time, until it is too short for a timer.
  Clock::duration pause = steady(pace, at, 160us, 32, 1);
  ASSERT_EQ(pause, 160us);
  int looks = 0;
  while (pause > Clock::duration::zero() && looks < 20) {
    at += pause;
    const auto arrivals = static_cast<std::uint64_t>(pause / 5us);  // 0.2 per us
    pace.took(arrivals - 1, arrivals - 1, (arrivals - 1) * kSize, 1);
    pause = pace.drained(at, kBuffer);
    ++looks;
  }
  EXPECT_EQ(pause, Clock::duration::zero());
  EXPECT_EQ(looks, 6) << "160 us halved: 80, 40, 20, 10, 5, then too short (nothing taken)";
}

TEST(UdpReadPace, APauseThatFoundNothingWaitsInEpollAndMeasuresAnew) {
  UdpReadPace pace;
  Clock::time_point at = started(pace);
  ASSERT_EQ(steady(pace, at, 50us, 20, 3), 80us);
  pace.idle();
  at += 10ms;
  pace.took(1, 1, kSize, 0);
  EXPECT_EQ(pace.drained(at, kBuffer), Clock::duration::zero());
  EXPECT_EQ(steady(pace, at, 50us, 20, 1), 80us);
}

}  // namespace
}  // namespace volley::transport
