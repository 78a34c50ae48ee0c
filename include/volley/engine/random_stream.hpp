#pragma once
// The random numbers behind `size=rand(a,b)` and `dir=` picks. Master and slave must draw the
// same numbers for the same connection, on any host, built with any standard library: so the
// generator (xoshiro256**, seeded through splitmix64) and the bounded draw (Lemire's
// multiply-shift with rejection) are written out here rather than taken from <random>, whose
// distributions differ between implementations.
#include <cstdint>

namespace volley::engine {

/// One step of splitmix64: advances `state` and returns its next output.
std::uint64_t splitmix64(std::uint64_t& state);

class RandomStream {
 public:
  explicit RandomStream(std::uint64_t seed);
  /// The stream of one connection of one strand in one step (transaction index): every side of
  /// a run derives the same one. Each step starts a fresh stream, so a step cut at different
  /// places on the two sides (a duration step) cannot leave the next step's draws apart. Step 0
  /// is the stream of the connection alone.
  static RandomStream for_connection(std::uint64_t run_seed, std::uint64_t group,
                                     std::uint64_t strand, std::uint32_t connection,
                                     std::uint64_t step = 0);

  /// The next 64 random bits.
  std::uint64_t next();
  /// Uniform in [lo, hi], both included (lo <= hi).
  std::uint64_t between(std::uint64_t lo, std::uint64_t hi);

 private:
  std::uint64_t s_[4];
};

}  // namespace volley::engine
