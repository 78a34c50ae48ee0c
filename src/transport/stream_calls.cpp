#include "volley/transport/stream_calls.hpp"

#include <sys/sendfile.h>

#include <algorithm>

namespace volley::transport {

IoResult sendfile_now(int fd, int file, off_t* offset, std::size_t bytes) {
  const ssize_t sent = ::sendfile(fd, file, offset, bytes);
  if (sent >= 0) return IoResult{static_cast<std::size_t>(sent), {}};
  const int error = errno == EINTR ? EAGAIN : errno;
  return IoResult{0, boost::system::error_code(error, boost::system::system_category())};
}

void set_wake_mark(int fd, std::size_t bytes, int& current) {
  const int mark = static_cast<int>(std::clamp<std::size_t>(bytes, 1, kMaxWakeAfter));
  if (mark == current || fd < 0) return;
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &mark, sizeof mark) == 0) current = mark;
}

}  // namespace volley::transport
