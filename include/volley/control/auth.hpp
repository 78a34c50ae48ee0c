#pragma once
// The pre-shared key and the cryptography of the control handshake (docs/control-protocol.md,
// "Authentication"; docs/security.md). HMAC-SHA256 and random bytes come from OpenSSL's
// libcrypto; proofs are compared in constant time. The key itself never crosses the wire.
// Pure functions, any thread.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace volley::control {

/// A secret: the pre-shared key or a key derived from it.
using Secret = std::vector<std::uint8_t>;

/// Least random material in a key: 32 bytes (64 hex digits, or 32 raw bytes).
inline constexpr std::size_t kMinKeyBytes = 32;
/// A key file larger than this is not a key file (and reading /dev/urandom by mistake must end).
inline constexpr std::size_t kMaxKeyFileBytes = 4096;
inline constexpr std::size_t kMacBytes = 32;
/// Bytes of the slave's challenge and of the master's nonce (sent as hex, twice as many digits).
inline constexpr std::size_t kChallengeBytes = 32;

/// A key read from a file, and a warning to show when the file is readable by other users.
struct KeyFile {
  Secret key;
  std::string warning;
};

/// The key in a key file's contents: 64 or more hex digits (an even number, trailing whitespace
/// ignored), or else the file's bytes as they are, at least 32 of them. Nullopt with `error`
/// (which names `source`, e.g. "--key-file 'k'") when it holds too little.
std::optional<Secret> parse_key(std::string_view contents, const std::string& source,
                                std::string& error);
/// Reads and parses a key file (a regular file, at most 4096 bytes). The error names `source`.
std::variant<KeyFile, std::string> read_key_file(const std::string& path,
                                                 const std::string& source);
/// How to make a key file, for error messages and --help.
std::string key_file_advice(const std::string& path);

/// `bytes` random bytes from the system's CSPRNG (RAND_bytes); throws when it has none.
std::string random_bytes(std::size_t bytes);
/// `bytes` random bytes as lower-case hex.
std::string random_hex(std::size_t bytes);
std::string to_hex(std::string_view bytes);
/// HMAC-SHA256(key, data), raw bytes.
std::string hmac(const Secret& key, std::string_view data);
/// The MAC an authenticated frame carries: HMAC(key, sequence number as 8 big-endian bytes ||
/// payload), raw bytes.
std::string frame_mac(const Secret& key, std::uint64_t sequence, std::string_view payload);
/// The JSON text of an authenticated frame's `payload`, as the channel reads it: the payload's
/// last kMacBytes must be frame_mac(key, sequence, the text before them). Nullopt when it is
/// shorter than a MAC or the MAC does not match (forged, replayed, reordered, another session's).
std::optional<std::string_view> authenticated_body(std::string_view payload, const Secret& key,
                                                   std::uint64_t sequence);
/// Constant-time equality (CRYPTO_memcmp); false for different lengths.
bool same_secret(std::string_view a, std::string_view b);

/// The proofs of the handshake, as hex: HMAC(key, label || challenge || nonce || version).
std::string master_proof(const Secret& key, std::string_view challenge, std::string_view nonce);
std::string slave_proof(const Secret& key, std::string_view challenge, std::string_view nonce);

/// What both sides derive once the handshake succeeded.
struct SessionKeys {
  Secret master_to_slave;
  Secret slave_to_master;
  /// Masks the run token in `load`: the token on the wire is token ^ data_mask, so a capture of
  /// the control connection does not reveal the token the data connections carry.
  std::uint32_t data_mask = 0;
};
SessionKeys derive_session_keys(const Secret& key, std::string_view challenge,
                                std::string_view nonce);

}  // namespace volley::control
