#pragma once
// A connected loopback TCP pair on one io_context, for the transport tests of the reads
// (drained_read.hpp, resuming_io.hpp).
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include "volley/transport/tcp_connection.hpp"

namespace volley::test {

/// `ours` is non-blocking, as a strand's; `peer` is blocking. Both are optional, and the
/// io_context is on the heap, so that a test can destroy either (or the context with a read
/// queued) first.
struct TcpPair {
  std::unique_ptr<boost::asio::io_context> io = std::make_unique<boost::asio::io_context>(1);
  std::optional<transport::TcpConnection> ours;
  std::optional<boost::asio::ip::tcp::socket> peer;

  TcpPair() {
    namespace asio = boost::asio;
    asio::ip::tcp::acceptor acceptor(
        *io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    peer.emplace(*io);
    peer->connect(acceptor.local_endpoint());
    asio::ip::tcp::socket accepted(*io);
    acceptor.accept(accepted);
    accepted.non_blocking(true);
    ours.emplace(std::move(accepted));
  }
  /// `bytes` bytes from the peer, written before it returns.
  void send(std::size_t bytes) {
    const std::string data(bytes, 'p');
    boost::asio::write(*peer, boost::asio::buffer(data));
  }
  /// Runs the coroutine `body` returns to its end; false if it did not end within 10 s (a
  /// hang guard).
  template <class F>
  bool run(F body) {
    bool done = false;
    boost::asio::co_spawn(
        *io,
        [&]() -> boost::asio::awaitable<void> {
          co_await body();
          done = true;
        },
        boost::asio::detached);
    io->run_for(std::chrono::seconds(10));
    return done;
  }
};

}  // namespace volley::test
