#pragma once
// The non-blocking calls a connected stream socket makes the same way on either engine: a send,
// a sendfile and the reader's wake-up mark (SO_RCVLOWAT). TcpConnection (Asio's reactor) and
// UringTcpConnection (io_uring) own the descriptor and its mark; these only make the call.
#include <sys/socket.h>
#include <sys/types.h>

#include <cerrno>
#include <cstddef>
#include <span>

#include <boost/system/error_code.hpp>

#include "volley/transport/io_result.hpp"

namespace volley::transport {

/// The largest wake-up mark a stream reader asks for: at most one wake-up per MiB of a stream.
/// The sender, which on loopback runs the reader's wake-up, then pays for one per MiB, a small
/// part of its time on any machine where a wake-up costs less than a few hundred microseconds;
/// and a reader's unread bytes stay bounded.
inline constexpr std::size_t kMaxWakeAfter = std::size_t{1024} * 1024;

/// One send(2) of `from` on stream socket `fd`, without waiting (EINTR retried).
inline IoResult send_now(int fd, std::span<const char> from) {
  ssize_t n = 0;
  do {
    n = ::send(fd, from.data(), from.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return IoResult{0, boost::system::error_code(errno, boost::system::system_category())};
  return IoResult{static_cast<std::size_t>(n), {}};
}

/// One sendfile(2) of up to `bytes` of file `file` from `*offset` (advanced) to socket `fd`.
/// EINTR sent nothing and reads as EAGAIN: the caller waits for room and tries again.
IoResult sendfile_now(int fd, int file, off_t* offset, std::size_t bytes);

/// Sets socket `fd`'s wake-up mark (SO_RCVLOWAT) to `bytes`, within 1..kMaxWakeAfter, unless
/// `current` (the mark the socket has) is that already; `current` follows what the kernel took
/// (on failure the kernel keeps its mark, and the next call tries again).
void set_wake_mark(int fd, std::size_t bytes, int& current);

}  // namespace volley::transport
