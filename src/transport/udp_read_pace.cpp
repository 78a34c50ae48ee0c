#include "volley/transport/udp_read_pace.hpp"

#include <algorithm>

namespace volley::transport {

UdpReadPace::Clock::duration UdpReadPace::drained(Clock::time_point now,
                                                  std::uint64_t buffer_bytes) {
  const bool first = last_ == Clock::time_point{};
  const Clock::duration interval = now - last_;
  const std::uint64_t taken = taken_;
  const std::uint64_t bytes = bytes_;
  if (lost_) {
    shrink_ = std::min(shrink_ * 2, kMostShrink);
  } else if (shrink_ > 1) {
    shrink_ /= 2;
  }
  last_ = now;
  taken_ = bytes_ = 0;
  lost_ = false;
  if (first || taken == 0 || interval.count() <= 0) return Clock::duration::zero();
  const std::uint64_t each = std::max<std::uint64_t>(bytes / taken, 1);
  const std::uint64_t aim = std::min(kMostPerLook, buffer_bytes / (kBufferShare * each));
  if (aim < 2) return Clock::duration::zero();  // a buffer this small: a look per arrival
  // The time `aim` datagrams took to come, at the rate they came since the last drain.
  const auto pause = interval * static_cast<Clock::rep>(aim) / static_cast<Clock::rep>(taken) /
                     static_cast<Clock::rep>(shrink_);
  if (pause > kMostPause || pause < kLeastPause) return Clock::duration::zero();
  return pause;
}

}  // namespace volley::transport
