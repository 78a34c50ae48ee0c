#pragma once
// Authentication of the control connection with a pre-shared key (docs/security.md).
//
//   master -> slave  hello {magic, protocol_version}
//   slave  -> master hello {..., auth: {method: "hmac-sha256", challenge: 32 random bytes}}
//   master -> slave  auth  {nonce: 32 random bytes, proof: HMAC(key, "master" challenge nonce v)}
//   slave  -> master auth_ok {proof: HMAC(key, "slave" challenge nonce v)}
//
// Both sides then derive one key per direction and a data-connection token from (challenge,
// nonce); every later frame carries HMAC(direction key, sequence number || payload), so a
// recorded session replayed, reordered or spliced into another is refused. The key itself never
// crosses the wire. HMAC and random bytes come from OpenSSL's libcrypto.
// Pure functions, any thread.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace volley::control {

/// A secret: the pre-shared key or a key derived from it.
using Secret = std::vector<std::uint8_t>;

inline constexpr std::size_t kMinKeyBytes = 16;
inline constexpr std::size_t kMacBytes = 32;
inline constexpr std::size_t kChallengeBytes = 32;

/// Reads a key file: at least 16 bytes (surrounding whitespace ignored), readable by its owner
/// only. The key, or nullopt with `error` saying why.
std::optional<Secret> read_key_file(const std::string& path, std::string& error);
/// `bytes` random bytes from the system's CSPRNG, as lower-case hex.
std::string random_hex(std::size_t bytes);
/// A fresh random key (for --local), as text suitable for a key file.
std::string random_key_text();
/// HMAC-SHA256(key, data), raw bytes.
std::string hmac(const Secret& key, std::string_view data);
/// Constant-time equality (CRYPTO_memcmp); false for different lengths.
bool same_secret(std::string_view a, std::string_view b);

/// The proofs of the handshake, as hex.
std::string master_proof(const Secret& key, std::string_view challenge, std::string_view nonce);
std::string slave_proof(const Secret& key, std::string_view challenge, std::string_view nonce);

/// What both sides derive once the handshake succeeded.
struct SessionKeys {
  Secret master_to_slave;
  Secret slave_to_master;
  std::uint32_t data_token = 0;  ///< every data connection of this session's runs carries it
};
SessionKeys derive_session_keys(const Secret& key, std::string_view challenge,
                                std::string_view nonce);

}  // namespace volley::control
