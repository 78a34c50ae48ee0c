#pragma once
// A TCP data connection: the socket, non-blocking, behind the surface every connection type has
// (try_read, try_write, sendfile, wait, cancel, close). The calls are inline: the strand's loop
// reaches them through a std::variant, so there is neither a virtual call nor an allocation.
// Thread: the owning worker's.
#include <sys/types.h>

#include <span>
#include <tuple>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "volley/transport/io_result.hpp"

namespace volley::transport {

/// What wait() returns for every connection type: the error, empty when ready.
using WaitAwaitable = boost::asio::awaitable<std::tuple<boost::system::error_code>>;
inline constexpr auto kWaitToken = boost::asio::as_tuple(boost::asio::use_awaitable);

class TcpConnection {
 public:
  using Socket = boost::asio::ip::tcp::socket;

  explicit TcpConnection(Socket socket) : socket_(std::move(socket)) {}

  IoResult try_read(std::span<char> into) {
    IoResult r;
    r.bytes = socket_.read_some(boost::asio::buffer(into.data(), into.size()), r.ec);
    return r;
  }
  IoResult try_write(std::span<const char> from) {
    IoResult r;
    r.bytes = socket_.write_some(boost::asio::buffer(from.data(), from.size()), r.ec);
    return r;
  }
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
  /// For connecting and socket options.
  Socket& socket() { return socket_; }

 private:
  Socket socket_;
};

}  // namespace volley::transport
