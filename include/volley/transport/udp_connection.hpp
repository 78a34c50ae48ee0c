#pragma once
// A UDP data connection: a connected UDP socket, non-blocking, with the surface every connection
// type has, kept out of epoll while it has no need to wait (see kLeaveAfter). One try_write sends
// one datagram, one try_read receives one. It also keeps this connection's datagram sequence
// (sending) and what arrived (receiving). Thread: the owning worker's.
#include <sys/socket.h>
#include <sys/types.h>

#include <cerrno>
#include <cstdint>
#include <span>
#include <utility>

#include <boost/asio/error.hpp>
#include <boost/asio/ip/udp.hpp>

#include "volley/transport/datagram.hpp"
#include "volley/transport/io_result.hpp"

namespace volley::transport {

class UdpConnection {
 public:
  using Socket = boost::asio::ip::udp::socket;

  /// While a socket is in epoll, the kernel runs epoll's wake-up callback for it on every
  /// datagram sent (the send buffer's space comes back) and every one received (on loopback in
  /// the sender's system call, under two spin locks with interrupts off): a cost per datagram
  /// that iperf3 does not pay (it selects only when it must). So a socket leaves the reactor
  /// (epoll_ctl DEL) after this many datagrams in a row without a wait, and a wait puts it back
  /// (epoll_ctl ADD): a stream's sender never waits on loopback and stays out, a receiver that
  /// waits every few datagrams (request-response) stays in, and one kept busy (a stream's
  /// receiver near its limit) pays two epoll_ctl per burst of at least this many.
  static constexpr std::uint32_t kLeaveAfter = 32;

  explicit UdpConnection(Socket socket) : socket_(std::move(socket)) {}
  UdpConnection(UdpConnection&& other) noexcept;
  UdpConnection& operator=(UdpConnection&& other) noexcept;
  UdpConnection(const UdpConnection&) = delete;
  UdpConnection& operator=(const UdpConnection&) = delete;
  ~UdpConnection();

  /// Takes the open socket out of the reactor now (a connection about to send or receive a
  /// stream); its next wait puts it back.
  boost::system::error_code leave_reactor();
  /// True while the socket is out of the reactor.
  [[nodiscard]] bool out_of_reactor() const { return fd_ >= 0; }

  /// One datagram; `bytes` is its size (a longer one is truncated to `into`).
  IoResult try_read(std::span<char> into) {
    return done(::recv(fd(), into.data(), into.size(), 0));
  }
  /// One datagram per read: never more than one, so nothing is kept for a later read.
  [[nodiscard]] bool reads_ahead() const { return false; }
  ReadAwaitable read(std::span<char> into) {
    join_reactor();
    return socket_.async_receive(boost::asio::buffer(into.data(), into.size()), kWaitToken);
  }
  /// One datagram of all of `from`.
  IoResult try_write(std::span<const char> from) {
    return done(::send(fd(), from.data(), from.size(), MSG_NOSIGNAL));
  }
  /// Not on UDP (the validator refuses sendfile on a UDP connection).
  IoResult sendfile(int /*fd*/, off_t* /*offset*/, std::size_t /*bytes*/) {
    return IoResult{0, boost::asio::error::operation_not_supported};
  }
  WaitAwaitable wait(Wait what) {
    join_reactor();
    return socket_.async_wait(what == Wait::kReadable ? Socket::wait_read : Socket::wait_write,
                              kWaitToken);
  }
  void cancel() {
    boost::system::error_code ignored;
    if (fd_ < 0) socket_.cancel(ignored);  // out of the reactor, nothing is pending
  }
  void close();
  /// The socket, in the reactor (one that was out of it is put back first).
  Socket& socket() {
    join_reactor();
    return socket_;
  }

  /// The sequence number of the next datagram sent; sent_one() moves on to the next.
  [[nodiscard]] std::uint64_t peek_seq() const { return send_seq_; }
  void sent_one() { ++send_seq_; }
  DatagramReceiver& receiver() { return receiver_; }

 private:
  int fd() { return fd_ >= 0 ? fd_ : socket_.native_handle(); }
  IoResult done(ssize_t n) {
    if (n < 0) {
      return IoResult{0, boost::system::error_code(errno, boost::system::system_category())};
    }
    if (fd_ < 0 && ++since_wait_ >= kLeaveAfter) leave_reactor();
    return IoResult{static_cast<std::size_t>(n), {}};
  }
  /// Hands a socket that is out of the reactor back to socket_ (epoll_ctl ADD), for a wait.
  void join_reactor();

  Socket socket_;
  /// The descriptor while it is out of the reactor (this object owns it then), else -1.
  int fd_ = -1;
  /// Datagrams moved in the reactor since the last wait.
  std::uint32_t since_wait_ = 0;
  boost::asio::ip::udp protocol_ = boost::asio::ip::udp::v4();
  std::uint64_t send_seq_ = 0;
  DatagramReceiver receiver_;
};

}  // namespace volley::transport
