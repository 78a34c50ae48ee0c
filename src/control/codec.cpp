#include "volley/control/codec.hpp"

#include <fmt/format.h>

namespace volley::control {

std::string encode_frame(const nlohmann::json& message) { return encode_payload(message.dump()); }

std::string encode_payload(std::string_view payload) {
  const auto n = static_cast<std::uint32_t>(payload.size());
  std::string frame;
  frame.reserve(4 + payload.size());
  frame.push_back(static_cast<char>((n >> 24) & 0xff));
  frame.push_back(static_cast<char>((n >> 16) & 0xff));
  frame.push_back(static_cast<char>((n >> 8) & 0xff));
  frame.push_back(static_cast<char>(n & 0xff));
  frame += payload;
  return frame;
}

std::variant<std::uint32_t, DecodeError> decode_length(const std::array<std::uint8_t, 4>& header,
                                                       std::uint32_t max_bytes) {
  const std::uint32_t n = (std::uint32_t{header[0]} << 24) | (std::uint32_t{header[1]} << 16) |
                          (std::uint32_t{header[2]} << 8) | std::uint32_t{header[3]};
  if (n == 0) return DecodeError{"empty control message"};
  if (n > max_bytes) {
    return DecodeError{
        fmt::format("control message of {} bytes exceeds the {} byte limit", n, max_bytes)};
  }
  return n;
}

std::variant<nlohmann::json, DecodeError> decode_payload(std::string_view payload) {
  nlohmann::json j = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return DecodeError{"control message is not valid JSON"};
  if (!j.is_object()) return DecodeError{"control message is not a JSON object"};
  const auto type = j.find("type");
  if (type == j.end() || !type->is_string()) {
    return DecodeError{"control message has no \"type\""};
  }
  return j;
}

}  // namespace volley::control
