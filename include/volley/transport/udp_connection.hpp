#pragma once
// A UDP data connection: a connected UDP socket, non-blocking, with the surface every connection
// type has, kept out of epoll while it has no need to wait (see kLeaveAfter). One try_write sends
// one datagram, one try_read receives one; try_write_batch and try_read_batch many (udp_batch.hpp).
// With gso, a super-buffer that arrived whole is cut back into its datagrams, and those a read did
// not take are held for the next reads. It also keeps this connection's datagram sequence
// (sending) and what arrived (receiving). Thread: the owning worker's.
#include <sys/socket.h>
#include <sys/types.h>

#include <cerrno>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include <boost/asio/error.hpp>
#include <boost/asio/ip/udp.hpp>

#include <array>
#include <vector>

#include "volley/transport/datagram.hpp"
#include "volley/transport/io_result.hpp"
#include "volley/transport/udp_batch.hpp"
#include "volley/transport/udp_read_pace.hpp"

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

  /// One datagram; `bytes` is its size (a longer one is truncated to `into`; one that was held
  /// brings its header only). With gso, `into` must hold a super-buffer (kMaxSuperBufferBytes).
  IoResult try_read(std::span<char> into) {
    if (holds()) return read_held(into);
    if (gso_) return read_super(into);
    return done(::recv(fd(), into.data(), into.size(), 0));
  }
  /// One recvmmsg into `batch` (see ReceiveBatch::receive); with gso a super-buffer comes whole.
  /// Held datagrams are not in it: take them first (holds()).
  IoResult try_read_batch(ReceiveBatch& batch, std::span<char> into, std::size_t slot,
                          std::size_t most) {
    return counted(batch.receive(fd(), into, slot, most, gso_));
  }
  /// A datagram a read took ahead of its flowop: its header (as far as it has one) and length.
  struct Held {
    std::array<char, kDatagramHeaderBytes> header{};
    std::uint32_t length = 0;
  };
  /// Whether datagrams are held for the next reads.
  [[nodiscard]] bool holds() const {
    return reading_ && reading_->held_next < reading_->held.size();
  }
  /// Keeps `datagram` (its first bytes, up to a header) of `length` bytes for the next reads.
  void hold(std::span<const char> datagram, std::size_t length);
  /// The oldest held datagram (holds() must be true).
  Held take_held();
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
  /// One sendmmsg of `batch` (see SendBatch::send).
  IoResult try_write_batch(SendBatch& batch) { return counted(batch.send(fd())); }
  /// gso on: the socket takes super-buffers whole (UDP_GRO) and reads cut them back; the caller's
  /// batches may send super-buffers (the kernel has UDP_SEGMENT: checked here). The error when
  /// the kernel has either not.
  boost::system::error_code use_gso();
  [[nodiscard]] bool gso() const { return gso_; }
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
  /// sent_one() `n` times.
  void sent(std::uint64_t n) { send_seq_ += n; }
  DatagramReceiver& receiver() { return reading().receiver; }
  /// When a stream's reader looks again after draining the socket (see UdpReadPace).
  UdpReadPace& pace() { return reading().pace; }
  /// The socket's receive buffer (SO_RCVBUF; read once: only its opening sets it).
  std::uint64_t receive_buffer_bytes();

 private:
  int fd() { return fd_ >= 0 ? fd_ : socket_.native_handle(); }
  IoResult done(ssize_t n) {
    if (n < 0) {
      return IoResult{0, boost::system::error_code(errno, boost::system::system_category())};
    }
    if (fd_ < 0 && ++since_wait_ >= kLeaveAfter) leave_reactor();
    return IoResult{static_cast<std::size_t>(n), {}};
  }
  /// done() for a batch's result.
  IoResult counted(IoResult r) {
    if (!r.ec && fd_ < 0 && ++since_wait_ >= kLeaveAfter) leave_reactor();
    return r;
  }
  /// try_read from the held datagrams.
  IoResult read_held(std::span<char> into);
  /// try_read with gso: one message; a super-buffer's first datagram, the others held.
  IoResult read_super(std::span<char> into);
  /// Hands a socket that is out of the reactor back to socket_ (epoll_ctl ADD), for a wait.
  void join_reactor();

  Socket socket_;
  /// The descriptor while it is out of the reactor (this object owns it then), else -1.
  int fd_ = -1;
  /// Datagrams moved in the reactor since the last wait.
  std::uint32_t since_wait_ = 0;
  boost::asio::ip::udp protocol_ = boost::asio::ip::udp::v4();
  bool gso_ = false;
  std::uint64_t send_seq_ = 0;
  /// What only a receiving connection keeps: on the heap, made at its first use, so that a
  /// connection (of any kind: the engine's AnyConnection is as large as its largest) stays small.
  struct Reading {
    DatagramReceiver receiver;
    UdpReadPace pace;
    std::uint64_t receive_buffer = 0;  ///< 0: not read yet
    /// Datagrams taken ahead of their reads; held[held_next] is the next read's.
    std::vector<Held> held;
    std::size_t held_next = 0;
  };
  Reading& reading() {
    if (!reading_) reading_ = std::make_unique<Reading>();
    return *reading_;
  }
  std::unique_ptr<Reading> reading_;
};

}  // namespace volley::transport
