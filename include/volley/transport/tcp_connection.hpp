#pragma once
// A TCP data connection: the socket, non-blocking, behind the surface every connection type has
// (try_read, try_write, sendfile, wait, cancel, close). The calls are inline: the strand's loop
// reaches them through a std::variant, so there is neither a virtual call nor an allocation.
// Thread: the owning worker's.
#include <sys/socket.h>
#include <sys/types.h>

#include <cerrno>
#include <memory>
#include <span>
#include <tuple>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "volley/transport/drained_read.hpp"
#include "volley/transport/io_result.hpp"
#include "volley/transport/resuming_io.hpp"
#include "volley/transport/stream_calls.hpp"
#include "volley/transport/zero_copy_sends.hpp"

namespace volley::transport {

class TcpConnection {
 public:
  using Socket = boost::asio::ip::tcp::socket;

  explicit TcpConnection(Socket socket)
      : reactor_(&boost::asio::use_service<boost::asio::detail::reactor>(
            boost::asio::query(socket.get_executor(), boost::asio::execution::context))),
        socket_(std::move(socket)) {
    // A short read is then taken as drained unless the peer closed (see drained_read.hpp).
    if (socket_.is_open()) watch_peer_close(socket_, *reactor_);
  }

  IoResult try_read(std::span<char> into) {
    IoResult r;
    r.bytes = socket_.read_some(boost::asio::buffer(into.data(), into.size()), r.ec);
    return r;
  }
  /// Reads what is there (at most into.size()), waiting until something is. Through Asio's reactor,
  /// told when a read drained the socket (returned less than asked: see drained_read.hpp): then
  /// the next read waits for epoll's edge before reading, else it reads at once. Either way no
  /// read fails with EAGAIN and no epoll_ctl is made (a wait() then a try_read() costs both).
  /// A read may take more than its flowop wants (the strand keeps the rest for the next read):
  /// TCP is a byte stream, and asking for more is how a drained socket is recognised.
  [[nodiscard]] bool reads_ahead() const { return true; }
  ReadAwaitable read(std::span<char> into) {
    return async_read_drained(socket_, *reactor_, boost::asio::buffer(into.data(), into.size()),
                              rule_, kWaitToken);
  }
  /// How the reads from now on tell that they drained the socket (see DrainRule): counted for a
  /// stream of large messages, by the short read for small ones. A system call (TCP_INQ on) the
  /// first time it is counted.
  void count_reads(bool counted) {
    if (!counted) {
      rule_ = DrainRule::kShortRead;
    } else if (rule_ != DrainRule::kCounted) {
      if (!inq_) inq_ = enable_inq(socket_.native_handle());
      if (inq_) rule_ = DrainRule::kCounted;
    }
  }
  /// The same read as a strand's coroutine co_awaits it (`IoDone r = co_await
  /// link.read_resuming(into)`): its completion resumes the coroutine in place, without Asio's
  /// initiation frame and executor dispatch (see resuming_io.hpp). Only in a coroutine on this
  /// socket's io_context.
  ResumingIo read_resuming(std::span<char> into) {
    return ResumingIo{&TcpConnection::start_read, this,
                      boost::asio::buffer(into.data(), into.size())};
  }
  /// Where the reactor keeps this socket's state (Asio's descriptor_state), which the event loop
  /// touches first when the socket is ready: for a prefetch (see engine::StrandCore::Successor).
  const void* reactor_state() {
    return drained_detail::SocketAccess::implementation(socket_).reactor_data_;
  }
  /// read_now() would make no read: the socket is known drained (see known_drained).
  [[nodiscard]] bool known_drained() { return transport::known_drained(socket_); }
  /// A read now, without the event loop, unless the socket is known drained (then would_block
  /// without a system call): a reader that finds data keeps reading in place (see read_now in
  /// drained_read.hpp); a short read marks the socket drained for the next read().
  IoResult read_now(std::span<char> into) {
    const ReadNow r =
        transport::read_now(socket_, boost::asio::buffer(into.data(), into.size()), rule_);
    return IoResult{r.bytes, r.ec};
  }
  /// Wakes a waiting reader only once `bytes` are queued (SO_RCVLOWAT; the end of the stream and
  /// errors wake it whatever the mark, and so does a receive window about to close), at most
  /// kMaxWakeAfter. The caller must know the peer will send that many, or its reader waits for
  /// bytes that never come. A system call only when the mark changes. The kernel makes room for
  /// twice the mark in the receive buffer (tcp_set_rcvlowat), unless wndsz= fixed its size; then
  /// it caps the mark at half of it.
  void wake_after(std::size_t bytes);
  static constexpr std::size_t kMaxWakeAfter = transport::kMaxWakeAfter;  // stream_calls.hpp
  /// A send(2) now, without waiting (the socket is non-blocking, and MSG_DONTWAIT says so again):
  /// straight to the system call rather than through Asio's write_some (its loop and error
  /// plumbing were ~40 instructions a write). EINTR is tried again; EAGAIN is would_block().
  IoResult try_write(std::span<const char> from) { return send_now(socket_.native_handle(), from); }
  /// Up to `bytes` of file `fd` from `*offset` (advanced); 0 bytes and no error: end of file.
  IoResult sendfile(int fd, off_t* offset, std::size_t bytes);
  WaitAwaitable wait(Wait what) {
    return socket_.async_wait(what == Wait::kReadable ? Socket::wait_read : Socket::wait_write,
                              kWaitToken);
  }
  /// Ends a wait in progress with operation_aborted.
  void cancel() {
    boost::system::error_code ignored;
    socket_.cancel(ignored);
  }
  void close() {
    boost::system::error_code ignored;
    socket_.close(ignored);
  }
  /// Opens the socket of a connection made here (one that is accepted comes open), watched for
  /// the peer's close (see the constructor).
  boost::system::error_code open(const boost::asio::ip::tcp& protocol) {
    boost::system::error_code ec;
    socket_.open(protocol, ec);
    if (!ec) watch_peer_close(socket_, *reactor_);
    return ec;
  }
  /// For connecting and socket options.
  Socket& socket() { return socket_; }
  /// The connection's zero-copy sends (writes with zerocopy), from the first one on; else nullptr.
  ZeroCopySends* zero_copy() { return zero_copy_.get(); }
  /// Before the first zero-copy send: SO_ZEROCOPY on the socket, and the record of its sends.
  boost::system::error_code start_zero_copy();

 private:
  static void start_read(const ResumingIo& read, ResumingHandler& handler) {
    auto& self = *static_cast<TcpConnection*>(read.connection);
    start_resuming_read(self.socket_, *self.reactor_, read.buffer, self.rule_, handler);
  }

  // Every read touches all three: the two small ones first, next to the socket's descriptor and
  // reactor state (the socket's executor, after them, is not touched per read), so that a read
  // at thousands of connections misses fewer cache lines.
  boost::asio::detail::reactor* reactor_;  // the socket's context's: found once, used per read
  int wake_after_ = 1;                     // the socket's SO_RCVLOWAT (Linux's default: 1)
  DrainRule rule_ = DrainRule::kShortRead;
  bool inq_ = false;  // TCP_INQ is on (count_reads)
  Socket socket_;
  std::unique_ptr<ZeroCopySends> zero_copy_;  // not touched by reads and plain writes
};

}  // namespace volley::transport
