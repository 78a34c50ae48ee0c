#pragma once
// The accepting side's UDP listener, beside the TCP DataListener on the same port number: a
// connecting strand sends its ConnectionHeader here (again until answered, as datagrams get
// lost); the listener makes a UDP socket for that connection, connected to the sender, hands it
// to the router, and answers with that socket's port. A repeated hello gets the same answer.
// Thread: runs on the io_context it was opened with; close() on that thread.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>

#include "volley/transport/connection_header.hpp"

namespace volley::transport {

class UdpListener {
 public:
  using Route = std::function<void(const ConnectionHeader&, boost::asio::ip::udp::socket)>;

  UdpListener(boost::asio::io_context& context, RunTokens tokens, Route route);
  ~UdpListener();
  UdpListener(const UdpListener&) = delete;
  UdpListener& operator=(const UdpListener&) = delete;

  /// Binds `address:port`; `window_bytes` sizes the sockets made for connections. Returns an
  /// error sentence, or "".
  std::string open(const boost::asio::ip::address& address, std::uint16_t port,
                   std::optional<std::uint64_t> window_bytes);
  void start();
  void close();
  /// The port it is bound to (0 when not open).
  [[nodiscard]] std::uint16_t port() const;
  /// Hellos refused for a bad or foreign header.
  [[nodiscard]] std::uint64_t rejected() const { return rejected_; }

 private:
  void receive_next();
  void on_hello(std::size_t bytes);

  RunTokens tokens_;
  Route route_;
  boost::asio::ip::address address_;
  std::optional<std::uint64_t> window_bytes_;
  boost::asio::ip::udp::socket socket_;
  boost::asio::ip::udp::endpoint from_;
  std::array<char, 64> buffer_{};
  /// (sender, group, strand, conn) -> the port answered, so a repeated hello is answered alike.
  using Key =
      std::tuple<boost::asio::ip::udp::endpoint, std::uint32_t, std::uint32_t, std::uint32_t>;
  std::map<Key, std::uint16_t> answered_;
  std::uint64_t rejected_ = 0;
  bool open_ = false;
};

}  // namespace volley::transport
