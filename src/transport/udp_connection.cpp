#include "volley/transport/udp_connection.hpp"

#include <unistd.h>

namespace volley::transport {

UdpConnection::UdpConnection(UdpConnection&& other) noexcept
    : socket_(std::move(other.socket_)),
      fd_(std::exchange(other.fd_, -1)),
      since_wait_(other.since_wait_),
      protocol_(other.protocol_),
      send_seq_(other.send_seq_),
      receiver_(std::move(other.receiver_)) {}

UdpConnection& UdpConnection::operator=(UdpConnection&& other) noexcept {
  if (this != &other) {
    close();
    socket_ = std::move(other.socket_);
    fd_ = std::exchange(other.fd_, -1);
    since_wait_ = other.since_wait_;
    protocol_ = other.protocol_;
    send_seq_ = other.send_seq_;
    receiver_ = std::move(other.receiver_);
  }
  return *this;
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
