#pragma once
// The header at the front of every UDP datagram volley sends, and what the receiving side learns
// from it. UDP loses, reorders and duplicates datagrams, so the receiver, not the sender, says
// what arrived: a sequence number per connection and direction gives loss, reordering and
// duplicates; the send time gives the interarrival jitter of RFC 3550 (section 6.4.1). The header
// is part of the datagram's `size` (a datagram is never bigger than the profile asks).
#include <array>
#include <bitset>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "volley/transport/connection_header.hpp"

namespace volley::transport {

struct DatagramHeader {
  std::uint32_t token = 0;    ///< the run's token (as on TCP data connections)
  std::uint32_t conn = 0;     ///< the strand's connection id
  std::uint64_t seq = 0;      ///< 0, 1, 2, ... per connection and direction
  std::uint64_t sent_ns = 0;  ///< the sender's steady clock (only differences are used)
};

inline constexpr std::size_t kDatagramHeaderBytes = 28;
inline constexpr std::uint32_t kDatagramMagic = 0x564c5544;  // "VLUD"

void encode(const DatagramHeader& header, std::span<char> into);  ///< into.size() >= 28
/// Empty when the datagram is too short or its magic does not match.
std::optional<DatagramHeader> decode_datagram_header(std::span<const char> datagram);

/// The handshake of a UDP connection: the connecting side sends a ConnectionHeader (as on TCP)
/// to the accepting side's listener, repeated until answered; the answer names the port of the
/// socket the accepting side made for this connection.
inline constexpr std::size_t kDatagramAckBytes = 10;
inline constexpr std::uint32_t kDatagramAckMagic = 0x564c5541;  // "VLUA"
std::array<char, kDatagramAckBytes> encode_ack(std::uint32_t token, std::uint16_t port);
/// The port, when `datagram` is an answer carrying `token`.
std::optional<std::uint16_t> decode_ack(std::span<const char> datagram, std::uint32_t token);
/// The ConnectionHeader of a hello arriving at the UDP listener, when `datagram` is exactly one
/// header with the magic and one of `tokens` (anything else from a stranger or another run is
/// dropped).
std::optional<ConnectionHeader> decode_udp_hello(std::span<const char> datagram, RunTokens tokens);

/// What one arriving datagram was.
struct Arrival {
  std::uint64_t gap = 0;   ///< datagrams skipped before this one (counted lost, for now)
  bool late = false;       ///< an earlier one arriving after a later one: it was counted lost
  bool duplicate = false;  ///< seen before
};

/// Per connection and direction, on the receiving side.
class DatagramReceiver {
 public:
  /// `now_ns` is the receiver's steady clock.
  Arrival arrive(const DatagramHeader& header, std::uint64_t now_ns);
  /// RFC 3550 interarrival jitter, in nanoseconds.
  [[nodiscard]] std::uint64_t jitter_ns() const { return static_cast<std::uint64_t>(jitter_); }

 private:
  /// Which of the last kWindow sequence numbers below next_ arrived (bit seq % kWindow).
  static constexpr std::size_t kWindow = 4096;
  /// On the heap, made at the first arrival: 512 bytes inline would be in every connection
  /// (AnyConnection is as large as its largest kind), TCP ones too.
  std::unique_ptr<std::bitset<kWindow>> seen_;
  std::uint64_t next_ = 0;  ///< one past the highest sequence number seen
  bool started_ = false;
  double jitter_ = 0;
  std::uint64_t last_transit_ = 0;  ///< now - sent of the last arrival, modulo 2^64
};

}  // namespace volley::transport
