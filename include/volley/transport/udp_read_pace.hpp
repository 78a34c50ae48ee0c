#pragma once
// When a stream's receiver, having drained its socket, looks again. Waiting in epoll for the next
// datagram makes the sender wake the receiver: on loopback inside the sender's own system call,
// through an interrupt to the receiver's idle CPU, about a quarter of the sender's time when the
// receiver keeps up, for a few datagrams per wake-up. So a stream that comes fast is read on a
// timer instead: the receiver sleeps, out of epoll, about as long as a look's worth of arrivals
// takes to come at the rate they came since the last look, then takes them in one batch. An
// arrival is what the kernel queues and wakes a reader for: a datagram, or with gso a
// super-buffer; the rate counts those the kernel dropped too (the gaps the receiver found). The
// pause comes from what was measured, so it follows the machine; a look aims at a quarter of the
// receive buffer at most, and a look that came on time after a pause yet found a gap (the buffer
// overflowed during the pause) makes the pauses shorter until none does. A look that came late
// (the receiver waited for a CPU) or after a wait in epoll says nothing about the pause.
// Thread: the connection's.
#include <chrono>
#include <cstdint>

namespace volley::transport {

class UdpReadPace {
 public:
  using Clock = std::chrono::steady_clock;
  /// The most arrivals a look aims at: enough that a look costs little per arrival.
  static constexpr std::uint64_t kMostPerLook = 32;
  /// A look aims at no more than this share of the receive buffer, counted in the arrivals'
  /// bytes (the kernel charges an arrival more than its bytes: twice or more for small ones).
  static constexpr std::uint64_t kBufferShare = 4;
  /// A stream whose pause would be shorter waits in epoll: a timer that short costs about what a
  /// wake-up does, and comes late by as much.
  static constexpr std::chrono::microseconds kLeastPause{5};
  /// A stream whose pause would be longer waits in epoll: it is slow enough that its wake-ups
  /// cost little, and its datagrams' arrival times (their jitter) stay each datagram's own.
  static constexpr std::chrono::microseconds kMostPause{200};
  /// Looks that overflow the buffer make the pauses at most this many times shorter (by then
  /// shorter than kLeastPause: the reader waits in epoll).
  static constexpr std::uint32_t kMostShrink = 64;

  /// `n` arrivals holding `datagrams` datagrams of `bytes` in all were taken; `lost` datagrams
  /// were missing before them (gaps).
  void took(std::uint64_t n, std::uint64_t datagrams, std::uint64_t bytes, std::uint64_t lost) {
    taken_ += n;
    datagrams_ += datagrams;
    bytes_ += bytes;
    lost_ += lost;
  }
  /// The socket was found drained at `now`; its receive buffer holds `buffer_bytes`. How long to
  /// pause, out of epoll, before reading again; zero: wait in epoll for the next datagram.
  Clock::duration drained(Clock::time_point now, std::uint64_t buffer_bytes);
  /// A pause found nothing: the stream stopped or slowed. The next wait is in epoll, and the
  /// rate is measured anew from the datagrams that come after it.
  void idle() {
    last_ = Clock::time_point{};
    pause_ = Clock::duration::zero();
    taken_ = datagrams_ = bytes_ = lost_ = 0;
  }

 private:
  /// The pause to give for the arrivals taken (and lost) over `interval`, `lost_` already
  /// weighed in `shrink_`.
  [[nodiscard]] Clock::duration pause_for(Clock::duration interval,
                                          std::uint64_t buffer_bytes) const;

  Clock::time_point last_{};  ///< when the socket was last found drained; the epoch: not yet
  Clock::duration pause_{};   ///< the pause given then (zero: a wait in epoll)
  std::uint64_t taken_ = 0;   ///< arrivals taken since then
  std::uint64_t datagrams_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t lost_ = 0;  ///< datagrams missing before those taken
  /// Divides the pause: doubled after a look that overflowed the buffer, halved after one that
  /// came on time without a gap.
  std::uint32_t shrink_ = 1;
};

}  // namespace volley::transport
