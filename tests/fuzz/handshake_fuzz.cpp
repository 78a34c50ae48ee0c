// Fuzz target: the handshake's messages as a stranger on the control port or a slave the master
// dials may send them. The input is up to three JSON texts separated by NUL bytes, after a flag
// byte: the slave's hello as the master reads it (its limits and what authentication it asks
// for), the master's `auth` as a keyed slave checks it against its challenge, and the slave's
// `auth_ok` as the master checks it. Flag bit 0 replaces the `auth` message's proof with the right
// one and bit 1 the `auth_ok`'s, so the accepting paths are reached too (a fuzzer cannot forge an
// HMAC).
// Invariants checked: an auth is accepted exactly when its proof is the key's for its nonce, and
// the reply the slave then sends proves the slave to the master; a hello's request is either
// nothing, a well-formed challenge, or a problem.
#include <cstdlib>
#include <string>

#include "fuzz_input.hpp"
#include "volley/control/handshake.hpp"

namespace {

using namespace volley::control;
using nlohmann::json;

json parse(std::string_view text) {
  return json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
}

const Secret kKey(32, 0x5a);
const std::string kChallenge(64, 'c');

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  volley::fuzz::FuzzInput in(data, size);
  const std::uint8_t flags = in.byte();
  const json hello = parse(in.until('\0'));
  json auth = parse(in.until('\0'));
  json ok = parse(in.rest());

  if (hello.is_object()) {
    (void)check_hello(hello, "peer");
    (void)check_load_fits(announced_limits(hello), 1U << 20, 1U << 16);
    const AuthRequest request = requested_auth(hello);
    if (!request.asks && (!request.challenge.empty() || !request.problem.empty())) std::abort();
    if (request.asks && request.problem.empty() && request.challenge.size() != 64) std::abort();
  }

  std::string nonce;
  if (auth.is_object()) {
    nonce = text_field(auth, "nonce");
    if ((flags & 1) != 0) auth["proof"] = master_proof(kKey, kChallenge, nonce);
  }
  if (auth.is_discarded()) return 0;
  const auto accepted = accept_master_auth(kKey, kChallenge, auth);
  const bool right = auth.is_object() && text_field(auth, "type") == "auth" && nonce.size() == 64 &&
                     nonce.find_first_not_of("0123456789abcdef") == std::string::npos &&
                     text_field(auth, "proof") == master_proof(kKey, kChallenge, nonce);
  if (std::holds_alternative<AcceptedAuth>(accepted) != right) std::abort();
  if (const auto* a = std::get_if<AcceptedAuth>(&accepted)) {
    if (!slave_proved(kKey, kChallenge, nonce, a->reply)) std::abort();
  }

  if (ok.is_object() && (flags & 2) != 0) ok["proof"] = slave_proof(kKey, kChallenge, nonce);
  if (!ok.is_discarded()) {
    const bool proved = slave_proved(kKey, kChallenge, nonce, ok);
    if (proved && text_field(ok, "type") != "auth_ok") std::abort();
  }
  return 0;
}
