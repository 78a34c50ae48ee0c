#include "volley/transport/connection_header.hpp"

namespace volley::transport {
namespace {

void put_u32(std::uint8_t* out, std::uint32_t v) {
  out[0] = static_cast<std::uint8_t>(v >> 24);
  out[1] = static_cast<std::uint8_t>(v >> 16);
  out[2] = static_cast<std::uint8_t>(v >> 8);
  out[3] = static_cast<std::uint8_t>(v);
}

std::uint32_t get_u32(const std::uint8_t* in) {
  return (std::uint32_t{in[0]} << 24) | (std::uint32_t{in[1]} << 16) | (std::uint32_t{in[2]} << 8) |
         std::uint32_t{in[3]};
}

}  // namespace

std::array<std::uint8_t, kConnectionHeaderBytes> encode(const ConnectionHeader& header) {
  std::array<std::uint8_t, kConnectionHeaderBytes> out{};
  put_u32(out.data(), kConnectionMagic);
  put_u32(out.data() + 4, header.token);
  put_u32(out.data() + 8, header.group);
  put_u32(out.data() + 12, header.strand);
  put_u32(out.data() + 16, header.conn);
  return out;
}

std::optional<ConnectionHeader> decode_connection_header(
    const std::array<std::uint8_t, kConnectionHeaderBytes>& bytes) {
  if (get_u32(bytes.data()) != kConnectionMagic) return std::nullopt;
  return ConnectionHeader{get_u32(bytes.data() + 4), get_u32(bytes.data() + 8),
                          get_u32(bytes.data() + 12), get_u32(bytes.data() + 16)};
}

std::optional<ConnectionHeader> verify_connection_header(
    const std::array<std::uint8_t, kConnectionHeaderBytes>& bytes, std::uint32_t token) {
  auto header = decode_connection_header(bytes);
  if (!header || header->token != token) return std::nullopt;
  return header;
}

}  // namespace volley::transport
