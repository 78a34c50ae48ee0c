#include "volley/control/handshake.hpp"

#include <fmt/format.h>

#include "volley/core/printable.hpp"

namespace volley::control {

namespace asio = boost::asio;
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

/// The sentence for a receive that failed or brought the slave's `error`.
std::string refusal(const std::variant<json, ChannelError>& got) {
  if (const auto* error = std::get_if<ChannelError>(&got)) return error->message;
  std::string said = text_field(std::get<json>(got), "message", "no reason given");
  // The caller puts "slave HOST: " in front; the slave's own "slave: " would repeat it.
  if (said.starts_with("slave: ")) said.erase(0, 7);
  return core::printable(said, 400);
}

}  // namespace

json slave_hello(const AnnouncedLimits& limits, const std::string& challenge) {
  json hello = make_hello(limits);
  if (!challenge.empty()) hello["auth"] = {{"method", kMethod}, {"challenge", challenge}};
  return hello;
}

asio::awaitable<std::variant<MasterGreeting, std::string>> master_handshake(
    Channel& channel, const std::optional<Secret>& key) {
  const std::string peer = channel.peer();
  auto sent = co_await channel.send(make_hello());
  if (auto* e = std::get_if<ChannelError>(&sent)) co_return e->message;
  auto got = co_await channel.receive();
  if (std::holds_alternative<ChannelError>(got) ||
      text_field(std::get<json>(got), "type") == "error") {
    co_return refusal(got);
  }
  MasterGreeting greeting{std::get<json>(std::move(got)), std::nullopt};
  if (auto problem = check_hello(greeting.slave_hello, peer); !problem.empty()) co_return problem;
  const auto auth = greeting.slave_hello.find("auth");
  const bool asks = auth != greeting.slave_hello.end() && !auth->is_null();
  if (!asks) {
    if (key) {
      co_return std::string(
          "the slave has no key, and a master with a key runs only against a slave that proves "
          "it knows it: start the slave with `volley serve --key-file FILE` (docs/security.md)");
    }
    co_return greeting;
  }
  const std::string challenge = text_field(*auth, "challenge");
  if (text_field(*auth, "method") != kMethod || !is_token_hex(challenge)) {
    co_return fmt::format("the slave asks for an authentication this volley does not know ('{}')",
                          core::printable(text_field(*auth, "method"), 40));
  }
  if (!key) {
    co_return std::string(
        "the slave requires a key: give this master the slave's key file with --key-file FILE or "
        "VOLLEY_KEY_FILE (docs/security.md)");
  }
  const std::string nonce = random_hex(kChallengeBytes);
  json answer =
      message("auth", {{"nonce", nonce}, {"proof", master_proof(*key, challenge, nonce)}});
  auto answered = co_await channel.send(std::move(answer));
  if (auto* e = std::get_if<ChannelError>(&answered)) co_return e->message;
  auto reply = co_await channel.receive();
  if (std::holds_alternative<ChannelError>(reply) ||
      text_field(std::get<json>(reply), "type") == "error") {
    co_return fmt::format("{} (do this master's --key-file / VOLLEY_KEY_FILE and the slave's "
                          "--key-file hold the same key?)",
                          refusal(reply));
  }
  const json& ok = std::get<json>(reply);
  if (text_field(ok, "type") != "auth_ok" ||
      !same_secret(text_field(ok, "proof"), slave_proof(*key, challenge, nonce))) {
    co_return std::string(
        "the slave could not prove it knows the key (its key differs, or it is not the slave you "
        "meant); nothing was sent to it");
  }
  greeting.keys = derive_session_keys(*key, challenge, nonce);
  channel.authenticate_frames(greeting.keys->master_to_slave, greeting.keys->slave_to_master);
  co_return greeting;
}

std::variant<AcceptedAuth, std::string> accept_master_auth(const Secret& key,
                                                           const std::string& challenge,
                                                           const json& m) {
  const std::string type = text_field(m, "type");
  if (type != "auth") {
    return fmt::format("this slave requires a key, and the master sent '{}' instead of proving it "
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
