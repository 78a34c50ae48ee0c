#pragma once
// The greeting and, with a pre-shared key, the mutual authentication that open every control
// connection (docs/control-protocol.md, "Handshake"):
//
//   master -> slave  hello   {magic, protocol_version, volley_version}
//   slave  -> master hello   {..., limits, auth: {method: "hmac-sha256", challenge}}  (keyed slave)
//   master -> slave  auth    {nonce, proof: HMAC(key, "master proof" challenge nonce version)}
//   slave  -> master auth_ok {proof: HMAC(key, "slave proof" challenge nonce version)}
//
// Then both sides key the channel with per-direction keys derived from (key, challenge, nonce):
// every later frame carries HMAC(direction key, sequence number || payload). A slave without a
// key sends no `auth` in its hello and the session goes on unauthenticated (loopback, or
// --insecure); a master with a key refuses such a slave.
#include <optional>
#include <string>
#include <variant>

#include <boost/asio/awaitable.hpp>
#include <nlohmann/json.hpp>

#include "volley/control/auth.hpp"
#include "volley/control/channel.hpp"
#include "volley/control/message.hpp"

namespace volley::control {

/// What the master knows once the handshake succeeded.
struct MasterGreeting {
  nlohmann::json slave_hello;
  std::optional<SessionKeys> keys;  ///< set when the session is authenticated
};

/// The master's side, on a fresh connection to the slave named `host`: sends its hello, reads the
/// slave's, and when the slave asks for a key proves it knows `key`, checks the slave's proof and
/// keys the channel. The greeting, or the sentence to show after "slave HOST: ".
boost::asio::awaitable<std::variant<MasterGreeting, std::string>> master_handshake(
    Channel& channel, const std::optional<Secret>& key);

// The messages of the handshake, written and read apart from the coroutine that exchanges them
// (handshake_wire.cpp): every reader refuses what a stranger may send with a sentence, never an
// exception.

/// The slave's hello: its limits and, when `challenge` is not empty, the request for a key.
nlohmann::json slave_hello(const AnnouncedLimits& limits, const std::string& challenge);

/// What a slave's hello asks of the master: nothing (a slave without a key), a proof for
/// `challenge` (64 lower-case hex digits), or an authentication this volley does not know
/// (`problem`, the sentence to show).
struct AuthRequest {
  bool asks = false;
  std::string challenge;
  std::string problem;
};
AuthRequest requested_auth(const nlohmann::json& slave_hello);
/// The master's `auth` message: its nonce and its proof of `key` for the slave's challenge.
nlohmann::json master_auth(const Secret& key, const std::string& challenge,
                           const std::string& nonce);
/// Whether `reply` is an `auth_ok` proving the slave knows `key` for this challenge and nonce.
bool slave_proved(const Secret& key, const std::string& challenge, const std::string& nonce,
                  const nlohmann::json& reply);

/// The slave's check of the master's `auth` message against the challenge it sent.
struct AcceptedAuth {
  SessionKeys keys;
  nlohmann::json reply;  ///< the auth_ok to send (its own proof)
};
/// The accepted authentication, or why not (a sentence for the log and the master).
std::variant<AcceptedAuth, std::string> accept_master_auth(const Secret& key,
                                                           const std::string& challenge,
                                                           const nlohmann::json& message);

}  // namespace volley::control
