// The datagram header's wire form and what the receiving side counts from it: loss (gaps),
// reordering (late arrivals), duplicates and the RFC 3550 jitter.
#include "volley/transport/datagram.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace volley::transport {
namespace {

DatagramHeader at(std::uint64_t seq, std::uint64_t sent_ns = 0) {
  return DatagramHeader{7, 1, seq, sent_ns};
}

TEST(DatagramHeader, RoundTripsEveryField) {
  std::array<char, 64> buffer{};
  const DatagramHeader h{0xdeadbeef, 42, 0x0102030405060708ULL, 0x1112131415161718ULL};
  encode(h, buffer);
  const auto back = decode_datagram_header(buffer);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->token, h.token);
  EXPECT_EQ(back->conn, h.conn);
  EXPECT_EQ(back->seq, h.seq);
  EXPECT_EQ(back->sent_ns, h.sent_ns);
  // Big-endian on the wire: the magic "VLUD" first, then the token's high byte.
  EXPECT_EQ(buffer[0], 'V');
  EXPECT_EQ(static_cast<unsigned char>(buffer[4]), 0xde);
}

TEST(DatagramHeader, ShortOrForeignDatagramsHaveNone) {
  std::array<char, 64> buffer{};
  encode(at(3), buffer);
  EXPECT_FALSE(decode_datagram_header(std::span<const char>(buffer.data(), 27)).has_value());
  buffer[0] = 'X';
  EXPECT_FALSE(decode_datagram_header(buffer).has_value());
}

TEST(DatagramReceiver, InOrderArrivalsAreNeitherLostNorLate) {
  DatagramReceiver r;
  for (std::uint64_t s = 0; s < 10000; ++s) {  // more than the window, wrapping it
    const Arrival a = r.arrive(at(s), s);
    EXPECT_EQ(a.gap, 0U) << s;
    EXPECT_FALSE(a.late) << s;
    EXPECT_FALSE(a.duplicate) << s;
  }
}

TEST(DatagramReceiver, AGapIsCountedThenItsLateArrivalsOnceEach) {
  DatagramReceiver r;
  r.arrive(at(0), 0);
  EXPECT_EQ(r.arrive(at(4), 0).gap, 3U);  // 1, 2 and 3 skipped
  const Arrival late = r.arrive(at(2), 0);
  EXPECT_TRUE(late.late);
  EXPECT_FALSE(late.duplicate);
  EXPECT_TRUE(r.arrive(at(2), 0).duplicate);  // the same one again
  EXPECT_TRUE(r.arrive(at(4), 0).duplicate);
  EXPECT_TRUE(r.arrive(at(3), 0).late);
  EXPECT_EQ(r.arrive(at(5), 0).gap, 0U);
}

TEST(DatagramReceiver, BitsOfAnEarlierLapOfTheWindowDoNotMakeDuplicates) {
  DatagramReceiver r;
  // 0..4095 arrive, then 4096 + 5 skips 4096..4100, whose bits were set in the first lap.
  for (std::uint64_t s = 0; s < 4096; ++s) r.arrive(at(s), 0);
  EXPECT_EQ(r.arrive(at(4101), 0).gap, 5U);
  const Arrival a = r.arrive(at(4098), 0);
  EXPECT_TRUE(a.late);
  EXPECT_FALSE(a.duplicate);
  // A gap wider than the window clears it all.
  EXPECT_EQ(r.arrive(at(20000), 0).gap, 20000U - 4102U);
  EXPECT_TRUE(r.arrive(at(19999), 0).late);
  // Older than the window: counted late, never a duplicate.
  EXPECT_TRUE(r.arrive(at(10), 0).late);
  EXPECT_FALSE(r.arrive(at(10), 0).duplicate);
}

TEST(DatagramReceiver, JitterFollowsRfc3550) {
  DatagramReceiver r;
  // Transit times 100, 132, 100: |D| = 32 twice; J = 32/16 = 2, then 2 + (32 - 2)/16.
  r.arrive(at(0, 1000), 1100);
  EXPECT_EQ(r.jitter_ns(), 0U);
  r.arrive(at(1, 2000), 2132);
  EXPECT_EQ(r.jitter_ns(), 2U);
  r.arrive(at(2, 3000), 3100);
  EXPECT_EQ(r.jitter_ns(), 3U);  // 3.875, truncated
  // A duplicate does not move it.
  r.arrive(at(2, 3000), 9999999);
  EXPECT_EQ(r.jitter_ns(), 3U);
}

// The send time is the peer's number: transit times 2^63 apart (a signed difference would
// overflow) count as a change of 2^63, and a clock that wraps changes the transit by its step.
TEST(DatagramReceiver, JitterTakesAnySendTimes) {
  DatagramReceiver r;
  r.arrive(at(0, 0), 2048);
  r.arrive(at(1, std::uint64_t{1} << 63), 2048);
  EXPECT_EQ(r.jitter_ns(), (std::uint64_t{1} << 63) / 16);
  DatagramReceiver wrap;
  wrap.arrive(at(0, UINT64_MAX), 10);  // transit 11, modulo 2^64
  wrap.arrive(at(1, 0), 43);           // transit 43: a change of 32
  EXPECT_EQ(wrap.jitter_ns(), 2U);
}

}  // namespace
}  // namespace volley::transport
