#pragma once
// The accepting side's data listener: accepts connections, reads each one's ConnectionHeader, and
// hands the socket to whoever routes it to the owning strand. One listener per port serves every
// strand of a run. Thread: runs on the io_context it was opened with; close() on that thread.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "volley/transport/connection_header.hpp"

namespace volley::transport {

class DataListener {
 public:
  /// Called for every connection whose header carried the expected token, on the listener's
  /// thread. The callee takes the socket (and moves it to another io_context if it needs to).
  using Route = std::function<void(const ConnectionHeader&, boost::asio::ip::tcp::socket)>;

  DataListener(boost::asio::io_context& context, std::uint32_t token, Route route);
  ~DataListener();
  DataListener(const DataListener&) = delete;
  DataListener& operator=(const DataListener&) = delete;

  /// Binds and listens on `address:port` (port 0 = any free port). Returns an error sentence.
  std::string open(const boost::asio::ip::address& address, std::uint16_t port,
                   std::optional<std::uint64_t> window_bytes);
  [[nodiscard]] std::uint16_t port() const;
  /// Starts accepting (after open succeeded).
  void start();
  /// Stops accepting; drops connections whose header has not arrived yet.
  void close();
  /// Connections rejected for a bad or foreign header.
  [[nodiscard]] std::uint64_t rejected() const { return rejected_; }

 private:
  void accept_next();
  void read_header(boost::asio::ip::tcp::socket socket);

  std::uint32_t token_;
  Route route_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<bool> alive_;  // lets in-flight header reads notice close()
  std::uint64_t rejected_ = 0;
};

}  // namespace volley::transport
