#pragma once
// What one non-blocking system call on a connection came to, and what a connection can wait for.
// Shared by every connection type so the strand handles them alike.
#include <cstddef>

#include <boost/system/error_code.hpp>

namespace volley::transport {

/// Bytes moved and the error, if any. `would_block` (EAGAIN) means: wait, then try again.
struct IoResult {
  std::size_t bytes = 0;
  boost::system::error_code ec;
  [[nodiscard]] bool would_block() const;
};

enum class Wait { kReadable, kWritable };

}  // namespace volley::transport
