#include "volley/transport/datagram.hpp"

#include <bit>
#include <cstring>

namespace volley::transport {
namespace {

// Big-endian on the wire. One byte swap and one copy per field: the header is built for every
// datagram sent and read for every one received, so a byte-at-a-time loop showed in profiles.
template <class T>
T big_endian(T v) {
  if constexpr (std::endian::native == std::endian::big) {
    return v;
  } else if constexpr (sizeof(T) == 8) {
    return __builtin_bswap64(v);
  } else if constexpr (sizeof(T) == 4) {
    return __builtin_bswap32(v);
  } else {
    static_assert(sizeof(T) == 2);
    return __builtin_bswap16(v);
  }
}

template <class T>
void put(char* out, T v) {
  const T wire = big_endian(v);
  std::memcpy(out, &wire, sizeof(T));
}

template <class T>
T get(const char* in) {
  T wire;
  std::memcpy(&wire, in, sizeof(T));
  return big_endian(wire);
}

}  // namespace

void encode(const DatagramHeader& header, std::span<char> into) {
  put<std::uint32_t>(into.data(), kDatagramMagic);
  put<std::uint32_t>(into.data() + 4, header.token);
  put<std::uint32_t>(into.data() + 8, header.conn);
  put<std::uint64_t>(into.data() + 12, header.seq);
  put<std::uint64_t>(into.data() + 20, header.sent_ns);
}

std::optional<DatagramHeader> decode_datagram_header(std::span<const char> datagram) {
  if (datagram.size() < kDatagramHeaderBytes) return std::nullopt;
  if (get<std::uint32_t>(datagram.data()) != kDatagramMagic) return std::nullopt;
  return DatagramHeader{
      get<std::uint32_t>(datagram.data() + 4), get<std::uint32_t>(datagram.data() + 8),
      get<std::uint64_t>(datagram.data() + 12), get<std::uint64_t>(datagram.data() + 20)};
}

std::array<char, kDatagramAckBytes> encode_ack(std::uint32_t token, std::uint16_t port) {
  std::array<char, kDatagramAckBytes> out{};
  put<std::uint32_t>(out.data(), kDatagramAckMagic);
  put<std::uint32_t>(out.data() + 4, token);
  put<std::uint16_t>(out.data() + 8, port);
  return out;
}

std::optional<std::uint16_t> decode_ack(std::span<const char> datagram, std::uint32_t token) {
  if (datagram.size() != kDatagramAckBytes) return std::nullopt;
  if (get<std::uint32_t>(datagram.data()) != kDatagramAckMagic) return std::nullopt;
  if (get<std::uint32_t>(datagram.data() + 4) != token) return std::nullopt;
  return get<std::uint16_t>(datagram.data() + 8);
}

std::optional<ConnectionHeader> decode_udp_hello(std::span<const char> datagram, RunTokens tokens) {
  std::array<std::uint8_t, kConnectionHeaderBytes> raw{};
  if (datagram.size() != raw.size()) return std::nullopt;
  std::memcpy(raw.data(), datagram.data(), raw.size());
  auto header = decode_connection_header(raw);
  if (!header || !tokens.peer_of(header->token)) return std::nullopt;
  return header;
}

Arrival DatagramReceiver::arrive(const DatagramHeader& header, std::uint64_t now_ns) {
  Arrival a;
  if (!seen_) seen_ = std::make_unique<std::bitset<kWindow>>();
  const std::uint64_t seq = header.seq;
  // Indices are taken modulo kWindow, so operator[] (no bounds check) is safe: this runs once
  // per datagram received.
  std::bitset<kWindow>& seen = *seen_;
  if (seq >= next_) {
    a.gap = seq - next_;
    // Clear the bits of the sequence numbers skipped (they may still come, late) and of this one.
    if (seq - next_ >= kWindow) {
      seen.reset();
    } else {
      for (std::uint64_t s = next_; s < seq; ++s) seen[s % kWindow] = false;
    }
    seen[seq % kWindow] = true;
    next_ = seq + 1;
  } else if (next_ - seq > kWindow) {
    a.late =
        true;  // too old to tell from a duplicate: counted as the late arrival it most likely is
  } else if (seen[seq % kWindow]) {
    a.duplicate = true;
    return a;
  } else {
    seen[seq % kWindow] = true;
    a.late = true;
  }
  // RFC 3550: J += (|D| - J) / 16, D the change in transit time between consecutive arrivals.
  // Both differences are taken modulo 2^64 and read as signed (two's complement): the send time
  // is whatever number the peer wrote, and two of them may lie more than 2^63 apart, where a
  // signed subtraction would overflow.
  const std::uint64_t transit = now_ns - header.sent_ns;
  if (started_) {
    const std::uint64_t change = transit - last_transit_;
    const std::uint64_t magnitude = change > (UINT64_MAX >> 1) ? 0 - change : change;
    jitter_ += (static_cast<double>(magnitude) - jitter_) / 16.0;
  }
  started_ = true;
  last_transit_ = transit;
  return a;
}

}  // namespace volley::transport
