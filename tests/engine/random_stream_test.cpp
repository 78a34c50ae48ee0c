// The random streams must draw the same numbers on every host and with every standard library:
// these golden values were computed with an independent implementation of splitmix64,
// xoshiro256** and Lemire's bounded draw. A change here changes what existing profiles draw.
#include "volley/engine/random_stream.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace volley::engine {
namespace {

TEST(RandomStream, Splitmix64MatchesTheReference) {
  std::uint64_t state = 0;
  EXPECT_EQ(splitmix64(state), 0xe220a8397b1dcdafULL);  // Vigna's published first output
}

TEST(RandomStream, GoldenBitsAndDraws) {
  RandomStream plain(0);
  EXPECT_EQ(plain.next(), 0x99ec5f36cb75f2b4ULL);
  EXPECT_EQ(plain.next(), 0xbf6e1f784956452aULL);

  RandomStream bits = RandomStream::for_connection(1, 0, 0, 0);
  EXPECT_EQ(bits.next(), 0x63f29fb80c6411e4ULL);
  EXPECT_EQ(bits.next(), 0x1cd13c34d56d7436ULL);
  EXPECT_EQ(bits.next(), 0x304a4cf9abc83ec0ULL);

  auto draws = [](RandomStream s, std::uint64_t lo, std::uint64_t hi) {
    std::vector<std::uint64_t> out;
    for (int i = 0; i < 5; ++i) out.push_back(s.between(lo, hi));
    return out;
  };
  using V = std::vector<std::uint64_t>;
  EXPECT_EQ(draws(RandomStream::for_connection(1, 0, 0, 0), 64, 4096),
            (V{1638, 517, 824, 3933, 335}));
  EXPECT_EQ(draws(RandomStream::for_connection(1, 0, 0, 1), 64, 4096),
            (V{2499, 1131, 1494, 1629, 3085}));
  EXPECT_EQ(draws(RandomStream::for_connection(1, 2, 3, 4), 0, 9), (V{0, 2, 9, 3, 4}));
}

TEST(RandomStream, BoundsAreInclusiveAndEveryValueComes) {
  RandomStream s(42);
  std::vector<int> seen(5, 0);
  for (int i = 0; i < 10000; ++i) {
    const std::uint64_t v = s.between(10, 14);
    ASSERT_GE(v, 10U);
    ASSERT_LE(v, 14U);
    ++seen[v - 10];
  }
  for (const int n : seen) EXPECT_GT(n, 1500);  // ~2000 each
  EXPECT_EQ(s.between(7, 7), 7U);
  (void)s.between(0, ~std::uint64_t{0});  // the full range does not divide by zero
}

TEST(RandomStream, ConnectionsOfOneStrandDiffer) {
  auto a = RandomStream::for_connection(9, 0, 5, 1);
  auto b = RandomStream::for_connection(9, 0, 5, 2);
  auto c = RandomStream::for_connection(9, 0, 6, 1);
  const auto x = a.next();
  EXPECT_NE(x, b.next());
  EXPECT_NE(x, c.next());
}

TEST(RandomStream, EachStepOfAConnectionStartsItsOwnStream) {
  // Step 0 is the connection's stream as before; every later step a fresh one, the same on both
  // sides, so a step cut at different places on the two sides does not leave the next one's
  // draws apart.
  EXPECT_EQ(RandomStream::for_connection(9, 0, 5, 1, 0).next(),
            RandomStream::for_connection(9, 0, 5, 1).next());
  const auto step1 = RandomStream::for_connection(9, 0, 5, 1, 1).next();
  EXPECT_NE(step1, RandomStream::for_connection(9, 0, 5, 1, 0).next());
  EXPECT_NE(step1, RandomStream::for_connection(9, 0, 5, 1, 2).next());
  EXPECT_EQ(step1, RandomStream::for_connection(9, 0, 5, 1, 1).next());
}

}  // namespace
}  // namespace volley::engine
