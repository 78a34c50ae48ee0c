#pragma once
// Run-time failures, counted by kind. An I/O error is a value (boost::system::error_code) until it
// is classified here and counted; it never becomes an exception.
#include <array>
#include <cstdint>
#include <string_view>

#include <boost/system/error_code.hpp>

namespace volley::engine {

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
  /// before it keep their place in the control protocol's arrays.
  kAddrUnavailable,
};
inline constexpr std::size_t kErrorKindCount = 9;

/// Stable snake_case names, used as JSON keys and in text reports.
constexpr std::string_view to_string(ErrorKind kind) {
  constexpr std::array<std::string_view, kErrorKindCount> kNames = {
      "refused", "reset",  "peer_closed", "timed_out",       "not_connected",
      "unreachable", "file", "other",       "addr_unavailable"};
  return kNames[static_cast<std::size_t>(kind)];
}

/// Maps a system error to its kind. `operation_aborted` is never passed here: the caller knows
/// whether an abort was a deadline (expired), a stop, or a timeout.
ErrorKind classify(const boost::system::error_code& ec);

}  // namespace volley::engine
