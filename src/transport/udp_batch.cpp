#include "volley/transport/udp_batch.hpp"

#include <netinet/in.h>
#include <netinet/udp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace volley::transport {

namespace {

#ifndef UDP_SEGMENT
constexpr int UDP_SEGMENT = 103;  // linux/udp.h, Linux 4.18
#endif
#ifndef UDP_GRO
constexpr int UDP_GRO = 104;  // linux/udp.h, Linux 5.0
#endif

boost::system::error_code last_error() { return {errno, boost::system::system_category()}; }

}  // namespace

std::size_t gro_segment(msghdr& msg) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
      int segment = 0;
      std::memcpy(&segment, CMSG_DATA(c), sizeof(segment));
      return segment > 0 ? static_cast<std::size_t>(segment) : 0;
    }
  }
  return 0;
}

void SendBatch::clear(std::size_t segment) {
  per_message_ = segments_per_super(segment);
  segment_ = per_message_ > 1 ? segment : 0;
  datagrams_ = 0;
  messages_ = 0;
  pieces_ = 0;
}

std::size_t SendBatch::room() const {
  if (per_message_ == 1) return kMostMessages - datagrams_;
  // Whole super-buffers in the messages left, and what the last one begun still holds.
  const std::size_t most = std::min(kMostDatagrams, kMostMessages * per_message_);
  return most - datagrams_;
}

void SendBatch::add(std::span<const char> datagram) {
  char* data = const_cast<char*>(datagram.data());  // sendmmsg's iovec is not const; never written
  sizes_[datagrams_] = static_cast<std::uint32_t>(datagram.size());
  if (datagrams_ % per_message_ == 0) {  // the first datagram of a message
    mmsghdr& m = msgs_[messages_];
    m = mmsghdr{};
    m.msg_hdr.msg_iov = &iov_[pieces_];
    m.msg_hdr.msg_iovlen = 1;
    iov_[pieces_++] = iovec{data, datagram.size()};
    in_message_[messages_++] = 1;
    ++datagrams_;
    return;
  }
  iovec& last = iov_[pieces_ - 1];
  if (static_cast<char*>(last.iov_base) + last.iov_len == data) {
    last.iov_len += datagram.size();  // right after the last: one piece
  } else {
    iov_[pieces_++] = iovec{data, datagram.size()};
    ++msgs_[messages_ - 1].msg_hdr.msg_iovlen;
  }
  ++in_message_[messages_ - 1];
  ++datagrams_;
}

std::uint64_t SendBatch::bytes_of_first(std::size_t n) const {
  std::uint64_t total = 0;
  for (std::size_t d = 0; d < n && d < datagrams_; ++d) total += sizes_[d];
  return total;
}

IoResult SendBatch::send(int fd) {
  // A message of several datagrams asks the kernel to cut it (a message of one goes as it is: the
  // kernel refuses a segment size on a datagram no longer than it on older kernels).
  for (std::size_t m = 0; m < messages_ && segment_ != 0; ++m) {
    msghdr& h = msgs_[m].msg_hdr;
    if (in_message_[m] < 2) continue;
    h.msg_control = control_[m].data();
    h.msg_controllen = control_[m].size();
    cmsghdr* c = CMSG_FIRSTHDR(&h);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
    const auto segment = static_cast<std::uint16_t>(segment_);
    std::memcpy(CMSG_DATA(c), &segment, sizeof(segment));
  }
  const int sent = ::sendmmsg(fd, msgs_.data(), static_cast<unsigned>(messages_), MSG_NOSIGNAL);
  if (sent < 0) return IoResult{0, last_error()};
  std::size_t datagrams = 0;
  for (int m = 0; m < sent; ++m) datagrams += in_message_[static_cast<std::size_t>(m)];
  return IoResult{datagrams, {}};
}

IoResult ReceiveBatch::receive(int fd, std::span<char> into, std::size_t slot, std::size_t most,
                               bool gro) {
  into_ = into;
  slot_ = slot;
  messages_ = 0;
  const std::size_t n = std::min({most, kMostMessages, slot == 0 ? 0 : into.size() / slot});
  for (std::size_t m = 0; m < n; ++m) {
    iov_[m] = iovec{into.data() + m * slot, slot};
    msgs_[m] = mmsghdr{};
    msgs_[m].msg_hdr.msg_iov = &iov_[m];
    msgs_[m].msg_hdr.msg_iovlen = 1;
    if (gro) {
      msgs_[m].msg_hdr.msg_control = control_[m].data();
      msgs_[m].msg_hdr.msg_controllen = control_[m].size();
    }
  }
  const int got =
      ::recvmmsg(fd, msgs_.data(), static_cast<unsigned>(n), MSG_TRUNC | MSG_DONTWAIT, nullptr);
  if (got < 0) return IoResult{0, last_error()};
  messages_ = static_cast<std::size_t>(got);
  for (std::size_t m = 0; m < messages_; ++m) {
    segment_[m] = gro ? static_cast<std::uint32_t>(gro_segment(msgs_[m].msg_hdr)) : 0;
  }
  return IoResult{messages_, {}};
}

std::size_t ReceiveBatch::datagrams_in(std::size_t m) const {
  const std::size_t length = msgs_[m].msg_len;
  const std::size_t segment = segment_[m];
  if (segment == 0 || length <= segment) return 1;
  return (length + segment - 1) / segment;
}

ReceiveBatch::Datagram ReceiveBatch::datagram(std::size_t m, std::size_t d) const {
  const std::size_t length = msgs_[m].msg_len;
  const std::size_t in_slot = std::min<std::size_t>(length, slot_);
  const std::size_t segment = segment_[m] == 0 ? length : segment_[m];
  const std::size_t begin = std::min(d * segment, in_slot);
  const std::size_t own = std::min(segment, length - std::min(d * segment, length));
  const char* base = into_.data() + m * slot_;
  return Datagram{std::span<const char>(base + begin, std::min(own, in_slot - begin)), own};
}

}  // namespace volley::transport
