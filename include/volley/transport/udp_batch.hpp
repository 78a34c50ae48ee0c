#pragma once
// Many datagrams per system call: sendmmsg(2) and recvmmsg(2), and with gso the kernel's
// super-buffers. On the way out a message may hold several datagrams of one size, which the kernel
// cuts apart (UDP_SEGMENT); on the way in a socket with UDP_GRO may be handed such a message whole,
// its segment size in a control message, and cutting it back is the reader's. A batch points at
// datagrams the caller laid out; datagrams of one message that follow each other in memory go as
// one piece (the kernel copies a super-buffer of one piece a quarter faster than one of a piece
// per header and per body). Thread: the owner's.
#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "volley/transport/datagram.hpp"
#include "volley/transport/io_result.hpp"

namespace volley::transport {

/// The most datagrams the kernel cuts one super-buffer into (its UDP_MAX_SEGMENTS: 64 up to
/// Linux 6.x, 128 since).
inline constexpr std::size_t kMaxGsoSegments = 64;
/// The most bytes of one super-buffer: the largest UDP payload over IPv4.
inline constexpr std::size_t kMaxSuperBufferBytes = 65507;

/// Datagrams of `segment` bytes in one super-buffer: as many as fit, at most kMaxGsoSegments; 1
/// when two do not fit (no super-buffer at all).
constexpr std::size_t segments_per_super(std::size_t segment) {
  if (segment == 0 || segment > kMaxSuperBufferBytes / 2) return 1;
  const std::size_t fit = kMaxSuperBufferBytes / segment;
  return fit < kMaxGsoSegments ? fit : kMaxGsoSegments;
}

/// The datagrams of one sendmmsg.
class SendBatch {
 public:
  /// The most messages of one call, and so the most datagrams without gso.
  static constexpr std::size_t kMostMessages = 64;
  /// The most datagrams of one call with gso: 4 super-buffers of 64.
  static constexpr std::size_t kMostDatagrams = 4 * kMaxGsoSegments;

  /// Empties the batch. `segment` > 0: the datagrams are all of that size and go as super-buffers
  /// of segments_per_super(segment) each; 0: one datagram a message.
  void clear(std::size_t segment);
  /// How many more datagrams fit in one call.
  [[nodiscard]] std::size_t room() const;
  /// Appends one datagram, `datagram`, which is not copied: it must stay as it is until send().
  /// Needs room() > 0; with a segment size, its size must be that.
  void add(std::span<const char> datagram);
  [[nodiscard]] std::size_t datagrams() const { return datagrams_; }
  /// Bytes of the first `n` datagrams.
  [[nodiscard]] std::uint64_t bytes_of_first(std::size_t n) const;

  /// One sendmmsg on the non-blocking `fd`. `bytes` is the number of datagrams the kernel took:
  /// every datagram of the messages it took from the front (a super-buffer goes whole or not at
  /// all). When it took none, the error (would_block when the socket's buffer is full); when it
  /// took some but not all, the next call finds out why.
  IoResult send(int fd);

 private:
  /// A control message with one uint16_t: UDP_SEGMENT.
  using Control = std::array<char, CMSG_SPACE(sizeof(std::uint16_t))>;
  std::size_t segment_ = 0;
  std::size_t per_message_ = 1;
  std::size_t datagrams_ = 0;
  std::size_t messages_ = 0;
  std::size_t pieces_ = 0;  ///< iov_ in use
  std::array<iovec, kMostDatagrams> iov_;
  std::array<std::uint32_t, kMostDatagrams> sizes_;
  std::array<mmsghdr, kMostMessages> msgs_;
  std::array<Control, kMostMessages> control_;
  std::array<std::uint16_t, kMostMessages> in_message_;  ///< datagrams of each message
};

/// One recvmmsg's messages in slots of the caller's buffer, and the datagrams they hold.
class ReceiveBatch {
 public:
  static constexpr std::size_t kMostMessages = 64;
  /// A slot that holds any super-buffer whole.
  static constexpr std::size_t kSuperSlotBytes = 65536;

  /// One recvmmsg on the non-blocking `fd`: at most `most` messages (1..kMostMessages), message m
  /// into bytes [m * slot, (m + 1) * slot) of `into`. A datagram longer than its slot is cut to it
  /// and still counted at its length (MSG_TRUNC). With `gro`, a message that came as a
  /// super-buffer says its segment size. `bytes` is the number of messages; none: the error.
  IoResult receive(int fd, std::span<char> into, std::size_t slot, std::size_t most, bool gro);
  [[nodiscard]] std::size_t messages() const { return messages_; }
  /// The datagrams message `m` holds: 1, or its super-buffer's segments.
  [[nodiscard]] std::size_t datagrams_in(std::size_t m) const;
  /// Datagram `d` of message `m`: its bytes as far as its slot holds them (the header first), and
  /// its length as sent.
  struct Datagram {
    std::span<const char> data;
    std::size_t length = 0;
  };
  [[nodiscard]] Datagram datagram(std::size_t m, std::size_t d) const;

 private:
  using Control = std::array<char, CMSG_SPACE(sizeof(int))>;
  std::span<char> into_;
  std::size_t slot_ = 0;
  std::size_t messages_ = 0;
  std::array<iovec, kMostMessages> iov_;
  std::array<mmsghdr, kMostMessages> msgs_;
  std::array<Control, kMostMessages> control_;
  std::array<std::uint32_t, kMostMessages> segment_;  ///< 0: one datagram
};

/// The segment size in the UDP_GRO control message of `msg`, or 0 when it has none.
std::size_t gro_segment(msghdr& msg);

}  // namespace volley::transport
