#include "volley/transport/tcp_connection.hpp"

#include <sys/sendfile.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include <boost/asio/error.hpp>

namespace volley::transport {

IoResult TcpConnection::sendfile(int fd, off_t* offset, std::size_t bytes) {
  const ssize_t sent = ::sendfile(socket_.native_handle(), fd, offset, bytes);
  if (sent >= 0) return IoResult{static_cast<std::size_t>(sent), {}};
  // EINTR: nothing was sent; wait for room and try again, as for EAGAIN.
  const int error = errno == EINTR ? EAGAIN : errno;
  return IoResult{0, boost::system::error_code(error, boost::system::system_category())};
}

void TcpConnection::wake_after(std::size_t bytes) {
  const int mark = static_cast<int>(std::clamp<std::size_t>(bytes, 1, kMaxWakeAfter));
  if (mark == wake_after_) return;
  // On failure the kernel keeps its mark, and so does wake_after_: the next call tries again.
  if (::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVLOWAT, &mark, sizeof mark) == 0) {
    wake_after_ = mark;
  }
}

boost::system::error_code TcpConnection::start_zero_copy() {
  if (zero_copy_) return {};
  if (auto ec = ZeroCopySends::enable(socket_.native_handle())) return ec;
  zero_copy_ = std::make_unique<ZeroCopySends>();
  return {};
}

}  // namespace volley::transport
