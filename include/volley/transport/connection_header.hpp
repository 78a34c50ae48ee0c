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
  std::uint32_t token = 0;   ///< one of the run's tokens (RunTokens): others are refused
  std::uint32_t group = 0;   ///< group index in the profile
  std::uint32_t strand = 0;  ///< strand index within the group
  std::uint32_t conn = 0;    ///< the strand's connection id (0 = anonymous)
  friend bool operator==(const ConnectionHeader&, const ConnectionHeader&) = default;
};

/// The tokens a run's data connections carry: the run's random token plus the index of the slave
/// the connection joins to the master. A slave knows only its own (peers = 1); a master with n
/// slaves takes base .. base + n - 1, and so knows which slave an accepted connection came from
/// (its connection serials are numbered per slave: docs/architecture.md, "The end-of-step
/// drain"). A stranger still has to guess one of n values in 2^32.
struct RunTokens {
  std::uint32_t base = 0;
  std::uint32_t peers = 1;
  /// The index of the slave whose token `token` is, if it is one of the run's.
  [[nodiscard]] std::optional<std::uint32_t> peer_of(std::uint32_t token) const {
    const std::uint32_t index = token - base;  // unsigned: wraps for tokens below base
    if (index < peers) return index;
    return std::nullopt;
  }
  /// The token of slave `peer`'s connections.
  [[nodiscard]] std::uint32_t token_for(std::uint32_t peer) const { return base + peer; }
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
