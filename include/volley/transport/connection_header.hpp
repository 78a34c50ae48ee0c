#pragma once
// The first bytes on every data connection: who is connecting. One data listener serves every
// strand, so the accepting side needs to know which of its strands (and which of that strand's
// connections) a new connection belongs to. The header is protocol overhead: it is not counted in
// any flowop's bytes.
#include <array>
#include <cstdint>
#include <optional>

namespace volley::transport {

struct ConnectionHeader {
  std::uint32_t token = 0;   ///< the run's token: a connection from another run is refused
  std::uint32_t group = 0;   ///< group index in the profile
  std::uint32_t strand = 0;  ///< strand index within the group
  std::uint32_t conn = 0;    ///< the strand's connection id (0 = anonymous)
  friend bool operator==(const ConnectionHeader&, const ConnectionHeader&) = default;
};

inline constexpr std::size_t kConnectionHeaderBytes = 20;
inline constexpr std::uint32_t kConnectionMagic = 0x564c5931;  // "VLY1"

std::array<std::uint8_t, kConnectionHeaderBytes> encode(const ConnectionHeader& header);
/// Empty when the magic does not match.
std::optional<ConnectionHeader> decode_connection_header(
    const std::array<std::uint8_t, kConnectionHeaderBytes>& bytes);
/// The header when its magic matches and it carries the run's `token`; empty otherwise (the
/// accepting side then closes the connection: it belongs to another run or to a stranger).
std::optional<ConnectionHeader> verify_connection_header(
    const std::array<std::uint8_t, kConnectionHeaderBytes>& bytes, std::uint32_t token);

}  // namespace volley::transport
