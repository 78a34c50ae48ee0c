#pragma once
// What one non-blocking system call on a connection came to, and what a connection can wait for.
// Shared by every connection type so the strand handles them alike.
#include <cerrno>
#include <cstddef>

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

}  // namespace volley::transport
