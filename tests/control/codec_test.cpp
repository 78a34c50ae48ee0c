// Framing of control messages: u32 big-endian length | one JSON object with a string "type".
#include "volley/control/codec.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <variant>

namespace volley::control {
namespace {

using nlohmann::json;

std::array<std::uint8_t, 4> header_of(std::uint32_t n) {
  return {static_cast<std::uint8_t>(n >> 24), static_cast<std::uint8_t>(n >> 16),
          static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)};
}

std::array<std::uint8_t, 4> header_from(const std::string& frame) {
  return {static_cast<std::uint8_t>(frame[0]), static_cast<std::uint8_t>(frame[1]),
          static_cast<std::uint8_t>(frame[2]), static_cast<std::uint8_t>(frame[3])};
}

TEST(Codec, EncodeDecodeRoundTrip) {
  const json message{{"type", "load"}, {"n", 42}, {"list", {1, 2, 3}}, {"s", "h\xc3\xa9llo"}};
  const std::string frame = encode_frame(message);
  ASSERT_GT(frame.size(), 4U);

  const auto length = decode_length(header_from(frame));
  ASSERT_TRUE(std::holds_alternative<std::uint32_t>(length));
  EXPECT_EQ(std::get<std::uint32_t>(length), frame.size() - 4);

  const auto decoded = decode_payload(std::string_view(frame).substr(4));
  ASSERT_TRUE(std::holds_alternative<json>(decoded)) << std::get<DecodeError>(decoded).message;
  EXPECT_EQ(std::get<json>(decoded), message);
}

TEST(Codec, LengthPrefixIsBigEndianAndPayloadIsCompact) {
  const json message{{"type", "x"}};
  const std::string frame = encode_frame(message);
  const std::string payload = R"({"type":"x"})";
  ASSERT_EQ(frame.size(), 4 + payload.size());
  EXPECT_EQ(static_cast<std::uint8_t>(frame[0]), 0);
  EXPECT_EQ(static_cast<std::uint8_t>(frame[1]), 0);
  EXPECT_EQ(static_cast<std::uint8_t>(frame[2]), 0);
  EXPECT_EQ(static_cast<std::uint8_t>(frame[3]), payload.size());
  EXPECT_EQ(frame.substr(4), payload);
}

TEST(Codec, LengthPrefixOfALargeMessageUsesEveryByteBigEndian) {
  // 0x010203 bytes of payload: {"type":"t","p":"aaa..."}
  const std::string overhead = R"({"p":"","type":"t"})";
  const std::size_t target = 0x010203;
  const json message{{"type", "t"}, {"p", std::string(target - overhead.size(), 'a')}};
  const std::string frame = encode_frame(message);
  ASSERT_EQ(frame.size(), 4 + target);
  EXPECT_EQ(static_cast<std::uint8_t>(frame[0]), 0x00);
  EXPECT_EQ(static_cast<std::uint8_t>(frame[1]), 0x01);
  EXPECT_EQ(static_cast<std::uint8_t>(frame[2]), 0x02);
  EXPECT_EQ(static_cast<std::uint8_t>(frame[3]), 0x03);
}

TEST(Codec, DecodeLengthReadsNetworkOrder) {
  const auto length = decode_length({0x00, 0x12, 0x34, 0x56});
  ASSERT_TRUE(std::holds_alternative<std::uint32_t>(length));
  EXPECT_EQ(std::get<std::uint32_t>(length), 0x123456U);
}

TEST(Codec, ZeroLengthIsRejected) {
  const auto length = decode_length(header_of(0));
  ASSERT_TRUE(std::holds_alternative<DecodeError>(length));
  EXPECT_FALSE(std::get<DecodeError>(length).message.empty());
}

TEST(Codec, ExactlyTheLimitIsAccepted) {
  const auto length = decode_length(header_of(kMaxFrameBytes));
  ASSERT_TRUE(std::holds_alternative<std::uint32_t>(length));
  EXPECT_EQ(std::get<std::uint32_t>(length), kMaxFrameBytes);
}

TEST(Codec, OneByteOverTheLimitIsRejected) {
  const auto length = decode_length(header_of(kMaxFrameBytes + 1));
  ASSERT_TRUE(std::holds_alternative<DecodeError>(length));
  const std::string& message = std::get<DecodeError>(length).message;
  EXPECT_NE(message.find(std::to_string(kMaxFrameBytes)), std::string::npos) << message;
  EXPECT_NE(message.find("limit"), std::string::npos) << message;
}

TEST(Codec, MaximalLengthIsRejected) {
  const auto length = decode_length({0xff, 0xff, 0xff, 0xff});
  ASSERT_TRUE(std::holds_alternative<DecodeError>(length));
  EXPECT_NE(std::get<DecodeError>(length).message.find("4294967295"), std::string::npos);
}

TEST(Codec, PayloadThatIsNotJsonIsRejected) {
  const auto decoded = decode_payload("{\"type\": \"x\"");
  ASSERT_TRUE(std::holds_alternative<DecodeError>(decoded));
  EXPECT_NE(std::get<DecodeError>(decoded).message.find("JSON"), std::string::npos);
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode_payload("not json at all")));
  EXPECT_TRUE(std::holds_alternative<DecodeError>(decode_payload("")));
}

TEST(Codec, PayloadThatIsNotAnObjectIsRejected) {
  for (const char* text : {"[1,2,3]", "42", "\"type\"", "null", "true"}) {
    const auto decoded = decode_payload(text);
    ASSERT_TRUE(std::holds_alternative<DecodeError>(decoded)) << text;
    EXPECT_NE(std::get<DecodeError>(decoded).message.find("object"), std::string::npos) << text;
  }
}

TEST(Codec, PayloadWithoutAStringTypeIsRejected) {
  for (const char* text : {"{}", R"({"kind":"hello"})", R"({"type":1})", R"({"type":null})",
                           R"({"type":["hello"]})"}) {
    const auto decoded = decode_payload(text);
    ASSERT_TRUE(std::holds_alternative<DecodeError>(decoded)) << text;
    EXPECT_NE(std::get<DecodeError>(decoded).message.find("type"), std::string::npos) << text;
  }
}

TEST(Codec, PayloadWithAStringTypeIsAccepted) {
  const auto decoded = decode_payload(R"({"type":"","x":[]})");
  ASSERT_TRUE(std::holds_alternative<json>(decoded));
  EXPECT_EQ(std::get<json>(decoded).at("type"), "");
}

}  // namespace
}  // namespace volley::control
