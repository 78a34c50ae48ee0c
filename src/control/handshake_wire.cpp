// The handshake's messages, written and checked (handshake.hpp). Kept out of handshake.cpp's
// coroutine so the fuzz target of these messages links them alone.
#include <fmt/format.h>

#include "volley/control/handshake.hpp"
#include "volley/core/printable.hpp"

namespace volley::control {

using nlohmann::json;

namespace {

constexpr std::string_view kMethod = "hmac-sha256";

/// A challenge, nonce or proof as sent: exactly 2 * kChallengeBytes lower-case hex digits.
bool is_token_hex(const std::string& text) {
  if (text.size() != 2 * kChallengeBytes) return false;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

json slave_hello(const AnnouncedLimits& limits, const std::string& challenge) {
  json hello = make_hello(limits);
  if (!challenge.empty()) hello["auth"] = {{"method", kMethod}, {"challenge", challenge}};
  return hello;
}

AuthRequest requested_auth(const json& slave_hello) {
  AuthRequest request;
  const auto auth = slave_hello.find("auth");
  request.asks = auth != slave_hello.end() && !auth->is_null();
  if (!request.asks) return request;
  request.challenge = text_field(*auth, "challenge");
  if (text_field(*auth, "method") != kMethod || !is_token_hex(request.challenge)) {
    request.problem =
        fmt::format("the slave asks for an authentication this volley does not know ('{}')",
                    core::printable(text_field(*auth, "method"), 40));
  }
  return request;
}

json master_auth(const Secret& key, const std::string& challenge, const std::string& nonce) {
  return message("auth", {{"nonce", nonce}, {"proof", master_proof(key, challenge, nonce)}});
}

bool slave_proved(const Secret& key, const std::string& challenge, const std::string& nonce,
                  const json& reply) {
  return text_field(reply, "type") == "auth_ok" &&
         same_secret(text_field(reply, "proof"), slave_proof(key, challenge, nonce));
}

std::variant<AcceptedAuth, std::string> accept_master_auth(const Secret& key,
                                                           const std::string& challenge,
                                                           const json& m) {
  const std::string type = text_field(m, "type");
  if (type != "auth") {
    return fmt::format(
        "this slave requires a key, and the master sent '{}' instead of proving it "
        "knows it (volley run --key-file FILE)",
        core::printable(type, 40));
  }
  const std::string nonce = text_field(m, "nonce");
  const std::string proof = text_field(m, "proof");
  if (!is_token_hex(nonce) || !is_token_hex(proof)) {
    return std::string("authentication failed: a malformed 'auth' message");
  }
  if (!same_secret(proof, master_proof(key, challenge, nonce))) {
    return std::string("authentication failed: the master's key is not this slave's key");
  }
  AcceptedAuth accepted{derive_session_keys(key, challenge, nonce),
                        message("auth_ok", {{"proof", slave_proof(key, challenge, nonce)}})};
  return accepted;
}

}  // namespace volley::control
