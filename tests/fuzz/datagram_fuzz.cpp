// Fuzz target: UDP datagrams as anyone who can reach a data port sends them. The input is a run of
// datagrams, each a length byte and that many bytes: each is read as the UDP listener reads a
// hello, as a connecting strand reads the listener's answer, and as a receiving strand reads a
// data datagram's header, whose sequence number and send time then go to the connection's
// DatagramReceiver (loss, reordering, duplicates and jitter counted from numbers a peer chose),
// with a receive clock the input moves too.
// Invariants checked: what decodes encodes back to the bytes read; an arrival is at most one of
// gap, late, duplicate; and (the sanitizers' part) no overflow or out-of-bounds access whatever
// sequence numbers and send times a peer writes.
#include <cstdlib>
#include <cstring>
#include <span>

#include "fuzz_input.hpp"
#include "volley/transport/datagram.hpp"

namespace {

using namespace volley::transport;

constexpr std::uint32_t kToken = 0x01020304;

void check_header(std::span<const char> datagram) {
  const auto header = decode_datagram_header(datagram);
  if (!header) return;
  char again[kDatagramHeaderBytes];
  encode(*header, again);
  if (std::memcmp(again, datagram.data(), sizeof again) != 0) std::abort();
}

void check_ack(std::span<const char> datagram) {
  const auto port = decode_ack(datagram, kToken);
  if (!port) return;
  const auto again = encode_ack(kToken, *port);
  if (datagram.size() != again.size() ||
      std::memcmp(again.data(), datagram.data(), again.size()) != 0) {
    std::abort();
  }
}

void check_hello(std::span<const char> datagram) {
  const auto header = decode_udp_hello(datagram, RunTokens{kToken, 1});
  if (!header) return;
  if (header->token != kToken || datagram.size() != kConnectionHeaderBytes) std::abort();
  const auto again = encode(*header);
  if (std::memcmp(again.data(), datagram.data(), again.size()) != 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  volley::fuzz::FuzzInput in(data, size);
  DatagramReceiver receiver;
  std::uint64_t now_ns = 0;
  while (!in.empty()) {
    const std::string_view datagram = in.take(in.byte());
    const std::span<const char> bytes(datagram.data(), datagram.size());
    check_hello(bytes);
    check_ack(bytes);
    check_header(bytes);
    // The receive clock: steady, moved by what follows each datagram (up to ~18 s a step).
    std::uint64_t step = 0;
    for (int i = 0; i < 4; ++i) step = step << 8 | in.byte();
    now_ns += step * 4;
    const auto header = decode_datagram_header(bytes);
    if (!header) continue;
    const Arrival a = receiver.arrive(*header, now_ns);
    if ((a.gap > 0) + a.late + a.duplicate > 1) std::abort();
  }
  return 0;
}
