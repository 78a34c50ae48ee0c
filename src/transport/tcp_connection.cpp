#include "volley/transport/tcp_connection.hpp"

namespace volley::transport {

IoResult TcpConnection::sendfile(int fd, off_t* offset, std::size_t bytes) {
  return sendfile_now(socket_.native_handle(), fd, offset, bytes);
}

void TcpConnection::wake_after(std::size_t bytes) {
  set_wake_mark(socket_.native_handle(), bytes, wake_after_);
}

boost::system::error_code TcpConnection::start_zero_copy() {
  if (zero_copy_) return {};
  if (auto ec = ZeroCopySends::enable(socket_.native_handle())) return ec;
  zero_copy_ = std::make_unique<ZeroCopySends>();
  return {};
}

}  // namespace volley::transport
