#pragma once
// One control connection: framed JSON messages over TCP. One reader and one writer at a time
// (the session's coroutines); errors come back as values.
// Thread: the io_context the socket belongs to.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <nlohmann/json.hpp>

#include "volley/control/auth.hpp"

namespace volley::control {

/// Why a receive or send failed: the sentence to show.
struct ChannelError {
  std::string message;
  bool closed_by_peer = false;  ///< an orderly close, not a protocol or network failure
  /// The connection itself is gone (closed, reset, or the peer stopped taking messages), not
  /// just one message bad: nothing more can be sent on it.
  bool connection_lost = false;
};

class Channel {
 public:
  explicit Channel(boost::asio::ip::tcp::socket socket);

  /// Reads one message (any size up to max_frame_bytes()).
  boost::asio::awaitable<std::variant<nlohmann::json, ChannelError>> receive();
  /// Writes one message. Only one send may be in flight. Once the connection is known to be
  /// gone (a receive or send found it closed or reset, or a send timed out) every send fails at
  /// once with that first error.
  boost::asio::awaitable<std::variant<std::monostate, ChannelError>> send(nlohmann::json message);
  /// Cancels pending operations and closes the socket.
  void close();
  [[nodiscard]] bool is_open() const { return socket_.is_open(); }
  /// "address:port" of the peer as it was when connected (or "unknown peer").
  [[nodiscard]] std::string peer() const;
  /// How long a send may wait for the peer to take its message before the connection counts as
  /// lost (default 5 s).
  void set_send_timeout(std::chrono::milliseconds timeout) { send_timeout_ = timeout; }
  boost::asio::ip::tcp::socket& socket() { return socket_; }
  /// The largest message receive() accepts; a larger announced length is refused before any
  /// allocation (a slave keeps this small until the peer has authenticated).
  void set_max_frame_bytes(std::uint32_t bytes) { max_frame_bytes_ = bytes; }
  [[nodiscard]] std::uint32_t max_frame_bytes() const { return max_frame_bytes_; }
  /// From now on every frame carries HMAC(key, sequence number || JSON) in its last 32 bytes,
  /// sent frames keyed with `send_key`, received ones checked against `receive_key`; a frame that
  /// fails the check (forged, replayed, reordered, from another session) ends the receive with an
  /// error. Set right after the authentication handshake, on both sides.
  void authenticate_frames(Secret send_key, Secret receive_key);
  /// The two halves of authenticate_frames, for the side that must check the peer's next frame
  /// before it sends its own last unauthenticated one (the slave's auth_ok).
  void authenticate_receive(Secret receive_key);
  void authenticate_send(Secret send_key);
  [[nodiscard]] bool authenticated() const { return !send_key_.empty(); }

 private:
  boost::asio::awaitable<std::variant<nlohmann::json, ChannelError>> receive_frame();

  boost::asio::ip::tcp::socket socket_;
  std::string peer_;
  std::optional<ChannelError> broken_;  ///< why the connection is gone, once known
  std::chrono::milliseconds send_timeout_{5000};
  std::uint32_t max_frame_bytes_;
  Secret send_key_;
  Secret receive_key_;
  std::uint64_t send_sequence_ = 0;
  std::uint64_t receive_sequence_ = 0;
};

}  // namespace volley::control
