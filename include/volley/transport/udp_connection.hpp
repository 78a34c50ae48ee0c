#pragma once
// A UDP data connection: a connected UDP socket, non-blocking, with the surface every connection
// type has. One try_write sends one datagram, one try_read receives one. It also keeps this
// connection's datagram sequence (sending) and what arrived (receiving). Thread: the owning
// worker's.
#include <sys/types.h>

#include <cstdint>
#include <span>
#include <utility>

#include <boost/asio/error.hpp>
#include <boost/asio/ip/udp.hpp>

#include "volley/transport/datagram.hpp"
#include "volley/transport/io_result.hpp"
#include "volley/transport/tcp_connection.hpp"

namespace volley::transport {

class UdpConnection {
 public:
  using Socket = boost::asio::ip::udp::socket;

  explicit UdpConnection(Socket socket) : socket_(std::move(socket)) {}

  /// One datagram; `bytes` is its size (a longer one is truncated to `into`).
  IoResult try_read(std::span<char> into) {
    IoResult r;
    r.bytes = socket_.receive(boost::asio::buffer(into.data(), into.size()), 0, r.ec);
    return r;
  }
  /// One datagram per read: never more than one, so nothing is kept for a later read.
  [[nodiscard]] bool reads_ahead() const { return false; }
  ReadAwaitable read(std::span<char> into) {
    return socket_.async_receive(boost::asio::buffer(into.data(), into.size()), kWaitToken);
  }
  /// One datagram of all of `from`.
  IoResult try_write(std::span<const char> from) {
    IoResult r;
    r.bytes = socket_.send(boost::asio::buffer(from.data(), from.size()), 0, r.ec);
    return r;
  }
  /// Not on UDP (the validator refuses sendfile on a UDP connection).
  IoResult sendfile(int /*fd*/, off_t* /*offset*/, std::size_t /*bytes*/) {
    return IoResult{0, boost::asio::error::operation_not_supported};
  }
  WaitAwaitable wait(Wait what) {
    return socket_.async_wait(what == Wait::kReadable ? Socket::wait_read : Socket::wait_write,
                              kWaitToken);
  }
  void cancel() {
    boost::system::error_code ignored;
    socket_.cancel(ignored);
  }
  void close() {
    boost::system::error_code ignored;
    socket_.close(ignored);
  }
  Socket& socket() { return socket_; }

  /// The sequence number of the next datagram sent; sent_one() moves on to the next.
  [[nodiscard]] std::uint64_t peek_seq() const { return send_seq_; }
  void sent_one() { ++send_seq_; }
  DatagramReceiver& receiver() { return receiver_; }

 private:
  Socket socket_;
  std::uint64_t send_seq_ = 0;
  DatagramReceiver receiver_;
};

}  // namespace volley::transport
