#pragma once
// Run-time failures, counted by kind. The engine classifies an I/O error into one
// (engine/error_kind.hpp); results count them per kind.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace volley::results {

enum class ErrorKind : std::uint8_t {
  kRefused,       ///< connect refused (nobody listening), or closed by the slave at its header
  kReset,         ///< connection reset by peer
  kPeerClosed,    ///< the peer closed the connection while a read or write wanted more
  kTimedOut,      ///< the flowop's `timeout=` passed
  kNotConnected,  ///< a flowop used a connection that is not open
  kUnreachable,   ///< host or network unreachable
  kFile,          ///< sendfile could not open or read its file
  kOther,         ///< anything else (the first few are logged with their message)
  /// EADDRNOTAVAIL: no local address and port to connect from (the ephemeral ports are all in
  /// use, TIME_WAIT included, or srcaddr= is not an address of this host). Last, so the kinds
  /// before it keep their index.
  kAddrUnavailable,
  /// A TLS handshake failed (OpenSSL's reason in the message): no common version or cipher, a
  /// certificate that is not the one the peer announced, a peer that does not speak TLS.
  kTlsHandshake,
};
inline constexpr std::size_t kErrorKindCount = 10;

inline constexpr std::array<std::string_view, kErrorKindCount> kErrorKindNames = {
    "refused",     "reset", "peer_closed", "timed_out",        "not_connected",
    "unreachable", "file",  "other",       "addr_unavailable", "tls_handshake"};

/// Stable snake_case names, used as JSON keys and in text reports.
constexpr std::string_view to_string(ErrorKind kind) {
  return kErrorKindNames[static_cast<std::size_t>(kind)];
}

/// The kind to_string() names `name`; nullopt for any other text.
constexpr std::optional<ErrorKind> error_kind_from_string(std::string_view name) {
  for (std::size_t k = 0; k < kErrorKindCount; ++k) {
    if (kErrorKindNames[k] == name) return static_cast<ErrorKind>(k);
  }
  return std::nullopt;
}

}  // namespace volley::results
