#pragma once
// The ranges every number from the command line, a profile or the wire is checked against before
// anything runs (docs/profile-reference.md lists them). Each bound is far above any real use and
// far below what would wrap a counter, overflow the clock or exhaust memory.
#include <chrono>
#include <cstdint>

namespace volley::core {

/// Any duration (transaction duration=, think, timeout=, --interval, ...). steady_clock holds
/// ~292 years of nanoseconds; a year keeps `now + duration` far from overflowing.
inline constexpr std::chrono::nanoseconds kMaxDuration = std::chrono::hours(24 * 365);
/// nthreads / nprocs of one group.
inline constexpr std::uint64_t kMaxStrandsPerGroup = 1'000'000;
/// The most a slave's --max-strands and --max-connections may be set to; what `volley run
/// --local` gives its own slave, which serves only the master that started it.
inline constexpr std::uint64_t kMaxRunSize = 10'000'000;
/// One read, write or chunk size, and a socket buffer (wndsz): each worker holds a buffer this big.
inline constexpr std::uint64_t kMaxIoBytes = 1ULL << 30;
/// The largest UDP payload over IPv4: one datagram, or one super-buffer the kernel cuts into
/// datagrams (UDP_SEGMENT).
inline constexpr std::uint64_t kMaxDatagramBytes = 65507;
/// Worker threads (--workers, --slave-workers, serve --workers).
inline constexpr std::uint64_t kMaxWorkers = 1024;
/// --interval: shorter intervals cost more in sampling than they show.
inline constexpr std::chrono::milliseconds kMinInterval{100};

}  // namespace volley::core
