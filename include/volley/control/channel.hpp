#pragma once
// One control connection: framed JSON messages over TCP. One reader and one writer at a time
// (the session's coroutines); errors come back as values.
// Thread: the io_context the socket belongs to.
#include <string>
#include <variant>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <nlohmann/json.hpp>

namespace volley::control {

/// Why a receive or send failed: the sentence to show.
struct ChannelError {
  std::string message;
  bool closed_by_peer = false;  ///< an orderly close, not a protocol or network failure
};

class Channel {
 public:
  explicit Channel(boost::asio::ip::tcp::socket socket);

  /// Reads one message (any size up to kMaxFrameBytes).
  boost::asio::awaitable<std::variant<nlohmann::json, ChannelError>> receive();
  /// Writes one message. Only one send may be in flight.
  boost::asio::awaitable<std::variant<std::monostate, ChannelError>> send(nlohmann::json message);
  /// Cancels pending operations and closes the socket.
  void close();
  [[nodiscard]] bool is_open() const { return socket_.is_open(); }
  /// "address:port" of the peer, or "unknown peer".
  [[nodiscard]] std::string peer() const;
  boost::asio::ip::tcp::socket& socket() { return socket_; }

 private:
  boost::asio::ip::tcp::socket socket_;
};

}  // namespace volley::control
