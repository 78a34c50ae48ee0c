#pragma once
// Which way the workers wait for their sockets.

namespace volley::engine {

/// Asio's epoll reactor, or io_uring with plain TCP connections on a ring per worker
/// (docs/architecture.md, "The io_uring engine").
enum class IoEngine { kEpoll, kUring };

}  // namespace volley::engine
