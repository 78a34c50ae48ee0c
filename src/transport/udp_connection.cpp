#include "volley/transport/udp_connection.hpp"

#include <netinet/in.h>
#include <netinet/udp.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace volley::transport {

namespace {

#ifndef UDP_SEGMENT
constexpr int UDP_SEGMENT = 103;  // linux/udp.h, Linux 4.18
#endif
#ifndef UDP_GRO
constexpr int UDP_GRO = 104;  // linux/udp.h, Linux 5.0
#endif

}  // namespace

UdpConnection::UdpConnection(UdpConnection&& other) noexcept
    : socket_(std::move(other.socket_)),
      fd_(std::exchange(other.fd_, -1)),
      since_wait_(other.since_wait_),
      protocol_(other.protocol_),
      gso_(other.gso_),
      send_seq_(other.send_seq_),
      reading_(std::move(other.reading_)) {}

UdpConnection& UdpConnection::operator=(UdpConnection&& other) noexcept {
  if (this != &other) {
    close();
    socket_ = std::move(other.socket_);
    fd_ = std::exchange(other.fd_, -1);
    since_wait_ = other.since_wait_;
    protocol_ = other.protocol_;
    send_seq_ = other.send_seq_;
    gso_ = other.gso_;
    reading_ = std::move(other.reading_);
  }
  return *this;
}

boost::system::error_code UdpConnection::use_gso() {
  const int on = 1;
  const int none = 0;  // UDP_SEGMENT 0: no default segment size (each batch says its own)
  if (::setsockopt(fd(), SOL_UDP, UDP_GRO, &on, sizeof(on)) != 0 ||
      ::setsockopt(fd(), SOL_UDP, UDP_SEGMENT, &none, sizeof(none)) != 0) {
    return {errno, boost::system::system_category()};
  }
  gso_ = true;
  return {};
}

std::uint64_t UdpConnection::receive_buffer_bytes() {
  Reading& r = reading();
  if (r.receive_buffer == 0) {
    int bytes = 0;
    socklen_t length = sizeof(bytes);
    if (::getsockopt(fd(), SOL_SOCKET, SO_RCVBUF, &bytes, &length) == 0 && bytes > 0) {
      r.receive_buffer = static_cast<std::uint64_t>(bytes);
    }
  }
  return r.receive_buffer;
}

void UdpConnection::hold(std::span<const char> datagram, std::size_t length) {
  Reading& r = reading();
  if (r.held_next == r.held.size()) {  // all taken: start again at the front
    r.held.clear();
    r.held_next = 0;
  }
  Held h;
  std::memcpy(h.header.data(), datagram.data(), std::min(datagram.size(), h.header.size()));
  h.length = static_cast<std::uint32_t>(length);
  r.held.push_back(h);
}

UdpConnection::Held UdpConnection::take_held() { return reading_->held[reading_->held_next++]; }

IoResult UdpConnection::read_held(std::span<char> into) {
  const Held h = take_held();
  std::memcpy(into.data(), h.header.data(), std::min(into.size(), h.header.size()));
  return IoResult{h.length, {}};
}

IoResult UdpConnection::read_super(std::span<char> into) {
  iovec iov{into.data(), into.size()};
  std::array<char, CMSG_SPACE(sizeof(int))> control{};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  const ssize_t n = ::recvmsg(fd(), &msg, 0);
  IoResult r = done(n);
  const std::size_t segment = gro_segment(msg);
  if (r.ec || segment == 0 || r.bytes <= segment) return r;
  const std::size_t in_buffer = std::min(r.bytes, into.size());
  for (std::size_t at = segment; at < r.bytes; at += segment) {
    hold(std::span<const char>(into.data() + std::min(at, in_buffer),
                               in_buffer - std::min(at, in_buffer)),
         std::min(segment, r.bytes - at));
  }
  r.bytes = segment;
  return r;
}

UdpConnection::~UdpConnection() { close(); }

boost::system::error_code UdpConnection::leave_reactor() {
  if (fd_ >= 0) return {};
  boost::system::error_code ec;
  const auto local = socket_.local_endpoint(ec);
  if (ec) return ec;
  const int fd = socket_.release(ec);
  if (ec) return ec;
  protocol_ = local.protocol();
  fd_ = fd;
  return {};
}

void UdpConnection::join_reactor() {
  since_wait_ = 0;
  if (fd_ < 0) return;
  boost::system::error_code ec;
  socket_.assign(protocol_, fd_, ec);
  // Should epoll refuse it, the socket is closed: the wait that follows fails
  // with bad_descriptor and the operation reports it, rather than waiting for
  // ever.
  if (ec) ::close(fd_);
  fd_ = -1;
}

void UdpConnection::close() {
  if (fd_ >= 0) {
    ::close(std::exchange(fd_, -1));
    return;
  }
  boost::system::error_code ignored;
  socket_.close(ignored);
}

}  // namespace volley::transport
