#include "volley/engine/random_stream.hpp"

#include <initializer_list>

namespace volley::engine {

namespace {
__extension__ using Wide = unsigned __int128;  // GCC and Clang on every 64-bit target
std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

RandomStream::RandomStream(std::uint64_t seed) {
  // splitmix64 never yields four zero words from one seed, the one state xoshiro cannot leave.
  for (auto& word : s_) word = splitmix64(seed);
}

RandomStream RandomStream::for_connection(std::uint64_t run_seed, std::uint64_t group,
                                          std::uint64_t strand, std::uint32_t connection,
                                          std::uint64_t step) {
  // Each field goes through a full splitmix64 step, so neighbouring strands or connections get
  // unrelated streams.
  std::uint64_t state = run_seed;
  std::uint64_t key = splitmix64(state);
  for (const std::uint64_t field : {group, strand, std::uint64_t{connection}}) {
    state = key ^ field;
    key = splitmix64(state);
  }
  if (step != 0) {
    state = key ^ step;
    key = splitmix64(state);
  }
  return RandomStream(key);
}

std::uint64_t RandomStream::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::uint64_t RandomStream::between(std::uint64_t lo, std::uint64_t hi) {
  const std::uint64_t range = hi - lo + 1;
  if (range == 0) return next();  // the whole 64-bit range
  // Lemire, "Fast Random Integer Generation in an Interval" (2019): the high word of x * range
  // is uniform once the low words that would favour some results are rejected.
  Wide m = static_cast<Wide>(next()) * range;
  auto low = static_cast<std::uint64_t>(m);
  if (low < range) {
    const std::uint64_t threshold = (0 - range) % range;
    while (low < threshold) {
      m = static_cast<Wide>(next()) * range;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return lo + static_cast<std::uint64_t>(m >> 64);
}

}  // namespace volley::engine
