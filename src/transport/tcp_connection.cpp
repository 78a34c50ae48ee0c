#include "volley/transport/tcp_connection.hpp"

#include <sys/sendfile.h>

#include <cerrno>

#include <boost/asio/error.hpp>

namespace volley::transport {

bool IoResult::would_block() const {
  return ec == boost::asio::error::would_block || ec == boost::asio::error::try_again;
}

IoResult TcpConnection::sendfile(int fd, off_t* offset, std::size_t bytes) {
  const ssize_t sent = ::sendfile(socket_.native_handle(), fd, offset, bytes);
  if (sent >= 0) return IoResult{static_cast<std::size_t>(sent), {}};
  // EINTR: nothing was sent; wait for room and try again, as for EAGAIN.
  const int error = errno == EINTR ? EAGAIN : errno;
  return IoResult{0, boost::system::error_code(error, boost::system::system_category())};
}

}  // namespace volley::transport
