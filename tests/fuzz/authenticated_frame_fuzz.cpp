// Fuzz target: a control connection's byte stream after the handshake, read the way the channel
// reads an authenticated session: a 4-byte length checked against the frame limit, the payload,
// its trailing HMAC checked against the frame's sequence number and stripped, then the JSON
// decoded. Before each frame a flag byte says whether the target signs the payload with the right
// key and sequence (so the decoding after the check is reached: a fuzzer cannot forge an HMAC),
// signs it for the wrong sequence (a replayed or reordered frame), or leaves it as sent.
// Invariants checked: a frame is accepted exactly when it carries the MAC for its own sequence
// number, and what it carries is the payload without the MAC.
#include <array>
#include <cstdlib>
#include <string>

#include "fuzz_input.hpp"
#include "volley/control/auth.hpp"
#include "volley/control/codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace volley::control;
  volley::fuzz::FuzzInput in(data, size);
  const Secret key(32, 0x33);
  std::uint64_t sequence = 0;
  while (!in.empty()) {
    const std::uint8_t sign = in.byte() % 3;  // 0: as sent, 1: signed right, 2: wrong sequence
    std::array<std::uint8_t, 4> header{};
    for (auto& b : header) b = in.byte();
    const auto length = decode_length(header, 1U << 16);
    if (std::holds_alternative<DecodeError>(length)) return 0;  // the channel closes here
    std::string payload(in.take(std::get<std::uint32_t>(length)));
    if (payload.size() < std::get<std::uint32_t>(length)) return 0;  // the peer went away
    if (sign != 0 && payload.size() >= kMacBytes) {
      const std::string_view body(payload.data(), payload.size() - kMacBytes);
      const std::string mac = frame_mac(key, sign == 1 ? sequence : sequence + 1, body);
      payload.replace(body.size(), kMacBytes, mac);
    }
    const auto body = authenticated_body(payload, key, sequence);
    if (sign == 1 && payload.size() >= kMacBytes && !body) std::abort();
    if (sign == 2 && body) std::abort();
    if (!body) return 0;  // the channel refuses the frame and closes
    if (body->size() + kMacBytes != payload.size() ||
        payload.compare(0, body->size(), *body) != 0) {
      std::abort();
    }
    ++sequence;
    (void)decode_payload(*body);
  }
  return 0;
}
