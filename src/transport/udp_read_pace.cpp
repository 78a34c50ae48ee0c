#include "volley/transport/udp_read_pace.hpp"

#include <algorithm>

namespace volley::transport {

UdpReadPace::Clock::duration UdpReadPace::drained(Clock::time_point now,
                                                  std::uint64_t buffer_bytes) {
  const bool first = last_ == Clock::time_point{};
  const Clock::duration interval = now - last_;
  // On time: the look came within twice its pause (the pause, then the reading it drained).
  const bool after_pause = !first && pause_ > Clock::duration::zero() && interval <= 2 * pause_;
  if (after_pause && lost_ > 0) {
    shrink_ = std::min(shrink_ * 2, kMostShrink);
  } else if (after_pause && shrink_ > 1) {
    shrink_ /= 2;
  }
  pause_ = first || taken_ == 0 || interval.count() <= 0 ? Clock::duration::zero()
                                                         : pause_for(interval, buffer_bytes);
  last_ = now;
  taken_ = datagrams_ = bytes_ = lost_ = 0;
  return pause_;
}

UdpReadPace::Clock::duration UdpReadPace::pause_for(Clock::duration interval,
                                                    std::uint64_t buffer_bytes) const {
  const std::uint64_t each = std::max<std::uint64_t>(bytes_ / taken_, 1);
  const std::uint64_t aim = std::min(kMostPerLook, buffer_bytes / (kBufferShare * each));
  if (aim < 2) return Clock::duration::zero();  // a buffer this small: a look per arrival
  // The arrivals that came: those taken, and those the kernel dropped (in arrivals: a dropped
  // super-buffer is its datagrams' gap).
  const std::uint64_t per = std::max<std::uint64_t>(datagrams_ / taken_, 1);
  const std::uint64_t came = taken_ + (lost_ + per - 1) / per;
  // The time `aim` arrivals took to come, at that rate.
  const auto pause = interval * static_cast<Clock::rep>(aim) / static_cast<Clock::rep>(came) /
                     static_cast<Clock::rep>(shrink_);
  if (pause > kMostPause || pause < kLeastPause) return Clock::duration::zero();
  return pause;
}

}  // namespace volley::transport
