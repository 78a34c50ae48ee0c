#pragma once
// What one non-blocking system call on a connection came to, what a connection can wait for, and
// what its waits and reads return. Shared by every connection type so the strand handles them
// alike.
#include <cerrno>
#include <cstddef>
#include <tuple>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/error_code.hpp>

namespace volley::transport {

/// Bytes moved and the error, if any. `would_block` (EAGAIN) means: wait, then try again.
struct IoResult {
  std::size_t bytes = 0;
  boost::system::error_code ec;
  /// Inline, and a test of the error first: every operation asks it (two error_code comparisons
  /// out of line were ~40 instructions per ping-pong round trip).
  [[nodiscard]] bool would_block() const {
    return ec && (ec.value() == EAGAIN || ec.value() == EWOULDBLOCK) &&
           ec.category() == boost::system::system_category();
  }
};

enum class Wait { kReadable, kWritable };

/// What wait() returns for every connection type: the error, empty when ready.
using WaitAwaitable = boost::asio::awaitable<std::tuple<boost::system::error_code>>;
/// What read() returns for every connection type: the error and the bytes read.
using ReadAwaitable = boost::asio::awaitable<std::tuple<boost::system::error_code, std::size_t>>;
inline constexpr auto kWaitToken = boost::asio::as_tuple(boost::asio::use_awaitable);

}  // namespace volley::transport
