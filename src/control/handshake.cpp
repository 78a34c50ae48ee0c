#include "volley/control/handshake.hpp"

#include <fmt/format.h>

#include "volley/core/printable.hpp"

namespace volley::control {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

/// The sentence for a receive that failed or brought the slave's `error`.
std::string refusal(const std::variant<json, ChannelError>& got) {
  if (const auto* error = std::get_if<ChannelError>(&got)) return error->message;
  std::string said = text_field(std::get<json>(got), "message", "no reason given");
  // The caller puts "slave HOST: " in front; the slave's own "slave: " would repeat it.
  if (said.starts_with("slave: ")) said.erase(0, 7);
  return core::printable(said, 400);
}

}  // namespace

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
  const AuthRequest request = requested_auth(greeting.slave_hello);
  if (!request.asks) {
    if (key) {
      co_return std::string(
          "the slave has no key, and a master with a key runs only against a slave that proves "
          "it knows it: start the slave with `volley serve --key-file FILE` (docs/security.md)");
    }
    co_return greeting;
  }
  if (!request.problem.empty()) co_return request.problem;
  const std::string& challenge = request.challenge;
  if (!key) {
    co_return std::string(
        "the slave requires a key: give this master the slave's key file with --key-file FILE or "
        "VOLLEY_KEY_FILE (docs/security.md)");
  }
  const std::string nonce = random_hex(kChallengeBytes);
  auto answered = co_await channel.send(master_auth(*key, challenge, nonce));
  if (auto* e = std::get_if<ChannelError>(&answered)) co_return e->message;
  auto reply = co_await channel.receive();
  if (std::holds_alternative<ChannelError>(reply) ||
      text_field(std::get<json>(reply), "type") == "error") {
    co_return fmt::format(
        "{} (do this master's --key-file / VOLLEY_KEY_FILE and the slave's "
        "--key-file hold the same key?)",
        refusal(reply));
  }
  if (!slave_proved(*key, challenge, nonce, std::get<json>(reply))) {
    co_return std::string(
        "the slave could not prove it knows the key (its key differs, or it is not the slave you "
        "meant); nothing was sent to it");
  }
  greeting.keys = derive_session_keys(*key, challenge, nonce);
  channel.authenticate_frames(greeting.keys->master_to_slave, greeting.keys->slave_to_master);
  co_return greeting;
}

}  // namespace volley::control
