// The header at the start of every data connection: "VLY1" | token | group | strand | conn.
#include "volley/transport/connection_header.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

namespace volley::transport {
namespace {

TEST(ConnectionHeader, RoundTrip) {
  const ConnectionHeader header{0xdeadbeefU, 3, 70000, 0xffffffffU};
  const auto bytes = encode(header);
  const auto back = decode_connection_header(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, header);
}

TEST(ConnectionHeader, ZeroHeaderRoundTrips) {
  const auto back = decode_connection_header(encode(ConnectionHeader{}));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, ConnectionHeader{});
}

TEST(ConnectionHeader, ByteLayoutIsMagicThenBigEndianFields) {
  const auto bytes = encode(ConnectionHeader{0x01020304U, 0x05060708U, 0x090a0b0cU, 0x0d0e0f10U});
  static_assert(kConnectionHeaderBytes == 20);
  const std::array<std::uint8_t, 20> expected{'V',  'L',  'Y',  '1',  0x01, 0x02, 0x03,
                                              0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
                                              0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10};
  EXPECT_EQ(bytes, expected);
}

TEST(ConnectionHeader, WrongMagicIsRejected) {
  auto bytes = encode(ConnectionHeader{1, 2, 3, 4});
  for (std::size_t i = 0; i < 4; ++i) {
    auto broken = bytes;
    broken[i] = static_cast<std::uint8_t>(broken[i] ^ 0x20U);
    EXPECT_FALSE(decode_connection_header(broken).has_value()) << i;
  }
  EXPECT_FALSE(decode_connection_header({}).has_value());
  // Little-endian magic is not the magic.
  bytes[0] = '1';
  bytes[1] = 'Y';
  bytes[2] = 'L';
  bytes[3] = 'V';
  EXPECT_FALSE(decode_connection_header(bytes).has_value());
}

TEST(ConnectionHeader, FieldsDoNotAffectTheMagicCheck) {
  std::array<std::uint8_t, kConnectionHeaderBytes> bytes{};
  bytes.fill(0xff);
  bytes[0] = 'V';
  bytes[1] = 'L';
  bytes[2] = 'Y';
  bytes[3] = '1';
  const auto back = decode_connection_header(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, (ConnectionHeader{0xffffffffU, 0xffffffffU, 0xffffffffU, 0xffffffffU}));
}

// A master with three slaves takes the run's token and the next two; slave i's is base + i.
TEST(RunTokens, EachSlaveHasTheRunsTokenPlusItsIndex) {
  const RunTokens master{0xfffffffeU, 3};  // wraps past 2^32: 0xfffffffe, 0xffffffff, 0
  EXPECT_EQ(master.peer_of(0xfffffffeU), 0U);
  EXPECT_EQ(master.peer_of(0xffffffffU), 1U);
  EXPECT_EQ(master.peer_of(0U), 2U);
  EXPECT_FALSE(master.peer_of(1U).has_value());
  EXPECT_FALSE(master.peer_of(0xfffffffdU).has_value());
  EXPECT_EQ(master.token_for(2), 0U);
  const RunTokens slave{master.token_for(1), 1};
  EXPECT_EQ(slave.peer_of(0xffffffffU), 0U);
  EXPECT_FALSE(slave.peer_of(0xfffffffeU).has_value());
}

}  // namespace
}  // namespace volley::transport
