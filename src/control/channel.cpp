#include "volley/control/channel.hpp"

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
constexpr auto kSendTimeout = std::chrono::seconds(5);

ChannelError from_error(const boost::system::error_code& ec, const std::string& peer) {
  if (ec == asio::error::eof) return {fmt::format("{} closed the control connection", peer), true};
  return {fmt::format("control connection to {}: {}", peer, ec.message()), false};
}
}  // namespace

Channel::Channel(asio::ip::tcp::socket socket)
    : socket_(std::move(socket)), max_frame_bytes_(kMaxFrameBytes) {
  boost::system::error_code ignored;
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
}

asio::awaitable<std::variant<json, ChannelError>> Channel::receive() {
  const std::string who = peer();
  std::array<std::uint8_t, 4> header{};
  auto [ec, n] = co_await asio::async_read(socket_, asio::buffer(header), kAwait);
  if (ec == asio::error::eof && n > 0) {
    co_return ChannelError{fmt::format("{} closed the control connection in the middle of a message",
                                       who)};
  }
  if (ec) co_return from_error(ec, who);
  auto length = decode_length(header, max_frame_bytes_);
  if (auto* bad = std::get_if<DecodeError>(&length)) {
    co_return ChannelError{fmt::format("{} sent a bad control message: {}", who, bad->message)};
  }
  std::string payload(std::get<std::uint32_t>(length), '\0');
  auto [body_ec, m] = co_await asio::async_read(socket_, asio::buffer(payload), kAwait);
  if (body_ec == asio::error::eof) {
    // A close in the middle of a message is a broken peer, not an orderly goodbye.
    co_return ChannelError{fmt::format("{} closed the control connection in the middle of a message",
                                       who)};
  }
  if (body_ec) co_return from_error(body_ec, who);
  if (!receive_key_.empty()) {
    if (payload.size() < kMacBytes) {
      co_return ChannelError{fmt::format("{} sent a control message without authentication", who)};
    }
    const std::string_view body(payload.data(), payload.size() - kMacBytes);
    const std::string_view mac(payload.data() + body.size(), kMacBytes);
    const std::string expected = frame_mac(receive_key_, receive_sequence_, body);
    if (!same_secret(mac, expected)) {
      co_return ChannelError{fmt::format("{} sent a control message that fails authentication "
                                         "(forged, replayed or out of order)",
                                         who)};
    }
    ++receive_sequence_;
    payload.resize(body.size());
  }
  auto decoded = decode_payload(payload);
  if (auto* bad = std::get_if<DecodeError>(&decoded)) {
    co_return ChannelError{fmt::format("{} sent a bad control message: {}", who, bad->message)};
  }
  co_return std::get<json>(std::move(decoded));
}

asio::awaitable<std::variant<std::monostate, ChannelError>> Channel::send(json message) {
  const std::string who = peer();
  std::string payload = message.dump();
  if (!send_key_.empty()) {
    payload += frame_mac(send_key_, send_sequence_++, payload);
  }
  const std::string frame = encode_payload(payload);
  // A peer that stops reading must not stall us: a send that cannot finish in time fails.
  asio::steady_timer guard(socket_.get_executor());
  guard.expires_after(kSendTimeout);
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
    co_return ChannelError{fmt::format("control connection to {}: the peer has not taken a "
                                       "message for {} s", who, kSendTimeout.count())};
  }
  if (ec) co_return from_error(ec, who);
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

std::string Channel::peer() const {
  boost::system::error_code ec;
  const auto endpoint = socket_.remote_endpoint(ec);
  if (ec) return "unknown peer";
  return core::format_host_port(endpoint.address().to_string(), endpoint.port());
}

}  // namespace volley::control
