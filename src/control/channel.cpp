#include "volley/control/channel.hpp"

#include <algorithm>
#include <array>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>

#include "volley/control/codec.hpp"
#include "volley/core/host_port.hpp"

namespace volley::control {

namespace asio = boost::asio;
using nlohmann::json;

namespace {
constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
/// A frame's buffer grows by at most this much ahead of the bytes read into it.
constexpr std::size_t kReadChunk = std::size_t{64} * 1024;

ChannelError from_error(const boost::system::error_code& ec, const std::string& peer) {
  if (ec == asio::error::eof)
    return {fmt::format("{} closed the control connection", peer), true, true};
  // A send into a connection the peer had closed: its reset came back before our next send.
  if (ec == asio::error::broken_pipe) {
    return {fmt::format("{} closed the control connection (broken pipe)", peer), false, true};
  }
  return {fmt::format("control connection to {}: {}", peer, ec.message()), false, true};
}
}  // namespace

Channel::Channel(asio::ip::tcp::socket socket)
    : socket_(std::move(socket)), max_frame_bytes_(kMaxFrameBytes) {
  boost::system::error_code ec;
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  // Named now: once the connection is reset the socket no longer knows its peer, and that is
  // when an error must say whom it was about.
  const auto endpoint = socket_.remote_endpoint(ec);
  peer_ = ec ? std::string("unknown peer")
             : core::format_host_port(endpoint.address().to_string(), endpoint.port());
}

asio::awaitable<std::variant<json, ChannelError>> Channel::receive() {
  auto got = co_await receive_frame();
  if (auto* error = std::get_if<ChannelError>(&got); error && error->connection_lost && !broken_) {
    broken_ = *error;
  }
  co_return got;
}

asio::awaitable<std::variant<json, ChannelError>> Channel::receive_frame() {
  const std::string& who = peer_;
  std::array<std::uint8_t, 4> header{};
  auto [ec, n] = co_await asio::async_read(socket_, asio::buffer(header), kAwait);
  if (ec == asio::error::eof && n > 0) {
    co_return ChannelError{
        fmt::format("{} closed the control connection in the middle of a message", who), false,
        true};
  }
  if (ec) co_return from_error(ec, who);
  auto length = decode_length(header, max_frame_bytes_);
  if (auto* bad = std::get_if<DecodeError>(&length)) {
    co_return ChannelError{fmt::format("{} sent a bad control message: {}", who, bad->message)};
  }
  const std::uint32_t announced = std::get<std::uint32_t>(length);
  // Grown as its bytes arrive, at most kReadChunk ahead of them: a peer that announces a large
  // frame and sends little of it costs what it sent, not what it announced.
  std::string payload;
  while (payload.size() < announced) {
    const std::size_t have = payload.size();
    const std::size_t chunk = std::min<std::size_t>(announced - have, kReadChunk);
    payload.resize(have + chunk);
    auto [body_ec, m] =
        co_await socket_.async_read_some(asio::buffer(payload.data() + have, chunk), kAwait);
    payload.resize(have + m);
    if (body_ec == asio::error::eof) {
      // A close in the middle of a message is a broken peer, not an orderly goodbye.
      co_return ChannelError{fmt::format("{} closed the control connection in the middle of a "
                                         "message",
                                         who),
                             false, true};
    }
    if (body_ec) co_return from_error(body_ec, who);
  }
  if (!receive_key_.empty()) {
    if (payload.size() < kMacBytes) {
      co_return ChannelError{fmt::format("{} sent a control message without authentication", who)};
    }
    const auto body = authenticated_body(payload, receive_key_, receive_sequence_);
    if (!body) {
      co_return ChannelError{
          fmt::format("{} sent a control message that fails authentication "
                      "(forged, replayed or out of order)",
                      who)};
    }
    ++receive_sequence_;
    payload.resize(body->size());
  }
  auto decoded = decode_payload(payload);
  if (auto* bad = std::get_if<DecodeError>(&decoded)) {
    co_return ChannelError{fmt::format("{} sent a bad control message: {}", who, bad->message)};
  }
  co_return std::get<json>(std::move(decoded));
}

asio::awaitable<std::variant<std::monostate, ChannelError>> Channel::send(json message) {
  // A connection known to be gone takes nothing more. Trying would not even fail promptly:
  // after a write that moved fewer bytes than asked (an error moves none), Boost.Asio's reactor
  // stops writing at once on that socket and waits for an edge-triggered writability event, and
  // on a connection already reset, whose last event was consumed, none comes (the send would
  // wait for the guard below).
  if (broken_) co_return *broken_;
  const std::string& who = peer_;
  std::string payload = message.dump();
  if (!send_key_.empty()) {
    payload += frame_mac(send_key_, send_sequence_++, payload);
  }
  const std::string frame = encode_payload(payload);
  // A peer that stops reading must not stall us: a send that cannot finish in time fails.
  asio::steady_timer guard(socket_.get_executor());
  guard.expires_after(send_timeout_);
  bool expired = false;
  guard.async_wait([this, &expired](const boost::system::error_code& ec) {
    if (ec) return;
    expired = true;
    boost::system::error_code ignored;
    socket_.cancel(ignored);
  });
  auto [ec, n] = co_await asio::async_write(socket_, asio::buffer(frame), kAwait);
  guard.cancel();
  co_await asio::post(socket_.get_executor(), asio::use_awaitable);  // the guard's handler ran
  if (expired) {
    broken_ = ChannelError{fmt::format("control connection to {}: the peer has not taken a "
                                       "message for {:.1f} s",
                                       who, std::chrono::duration<double>(send_timeout_).count()),
                           false, true};
    co_return *broken_;
  }
  if (ec) {
    broken_ = from_error(ec, who);
    co_return *broken_;
  }
  co_return std::monostate{};
}

void Channel::authenticate_frames(Secret send_key, Secret receive_key) {
  authenticate_receive(std::move(receive_key));
  authenticate_send(std::move(send_key));
}

void Channel::authenticate_receive(Secret receive_key) {
  receive_key_ = std::move(receive_key);
  receive_sequence_ = 0;
}

void Channel::authenticate_send(Secret send_key) {
  send_key_ = std::move(send_key);
  send_sequence_ = 0;
}

void Channel::close() {
  boost::system::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

std::string Channel::peer() const { return peer_; }

}  // namespace volley::control
