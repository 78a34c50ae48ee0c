#pragma once
// Framing of the control protocol: u32 length (network order) | one JSON object. Pure functions,
// no I/O: the channel reads 4 bytes, checks the length against the cap before allocating, reads
// the payload and decodes it here.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

namespace volley::control {

/// The largest payload either side accepts by default. A profile and a results document are far
/// smaller; anything larger is a broken or hostile peer, refused before any allocation.
inline constexpr std::uint32_t kMaxFrameBytes = 16U * 1024U * 1024U;
/// The largest payload a slave accepts before the peer has authenticated: a hello or an auth
/// message is a few hundred bytes, so a stranger cannot make the slave allocate more than this.
inline constexpr std::uint32_t kMaxGreetingFrameBytes = 4096;

struct DecodeError {
  std::string message;
};

/// length prefix + compact JSON text.
std::string encode_frame(const nlohmann::json& message);
/// length prefix + `payload` as it is.
std::string encode_payload(std::string_view payload);
/// The payload length in a frame header, or an error when it exceeds `max_bytes` or is 0.
std::variant<std::uint32_t, DecodeError> decode_length(const std::array<std::uint8_t, 4>& header,
                                                       std::uint32_t max_bytes = kMaxFrameBytes);
/// Parses one payload; it must be a JSON object with a string "type".
std::variant<nlohmann::json, DecodeError> decode_payload(std::string_view payload);

}  // namespace volley::control
