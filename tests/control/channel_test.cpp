// Channel: framed JSON messages over a real loopback TCP connection.
#include "volley/control/channel.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <variant>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/write.hpp>

#include "volley/control/codec.hpp"

namespace volley::control {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using nlohmann::json;

/// A connected pair of loopback sockets on one io_context.
struct SocketPair {
  asio::io_context context;
  tcp::socket client{context};
  tcp::socket server{context};

  SocketPair() {
    tcp::acceptor acceptor(context, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    client.connect(acceptor.local_endpoint());
    acceptor.accept(server);
  }

  /// Runs the context until it has no more work, failing the test after a few seconds.
  void run() {
    context.run_for(std::chrono::seconds(3));
    EXPECT_TRUE(context.stopped()) << "the coroutine did not finish in time";
  }
};

template <class T>
void spawn(asio::io_context& context, asio::awaitable<T> task) {
  asio::co_spawn(context, std::move(task), [](std::exception_ptr e, auto&&...) {
    if (e) std::rethrow_exception(e);
  });
}

asio::awaitable<void> send_then_receive(Channel& from, Channel& to, json message,
                                        std::optional<std::variant<std::monostate, ChannelError>>& sent,
                                        std::optional<std::variant<json, ChannelError>>& received) {
  sent = co_await from.send(std::move(message));
  received = co_await to.receive();
}

TEST(Channel, SendAndReceiveOneMessage) {
  SocketPair pair;
  Channel a(std::move(pair.client));
  Channel b(std::move(pair.server));
  EXPECT_TRUE(a.is_open());
  EXPECT_NE(a.peer().find("127.0.0.1:"), std::string::npos) << a.peer();

  const json message{{"type", "load"}, {"profile_text", std::string(100000, 'x')}, {"n", 7}};
  std::optional<std::variant<std::monostate, ChannelError>> sent;
  std::optional<std::variant<json, ChannelError>> received;
  spawn(pair.context, send_then_receive(a, b, message, sent, received));
  pair.run();

  ASSERT_TRUE(sent.has_value());
  EXPECT_TRUE(std::holds_alternative<std::monostate>(*sent));
  ASSERT_TRUE(received.has_value());
  ASSERT_TRUE(std::holds_alternative<json>(*received))
      << std::get<ChannelError>(*received).message;
  EXPECT_EQ(std::get<json>(*received), message);
}

asio::awaitable<void> receive_into(Channel& channel,
                                   std::optional<std::variant<json, ChannelError>>& received) {
  received = co_await channel.receive();
}

asio::awaitable<void> exchange_both_ways(Channel& a, Channel& b, std::vector<json>& got) {
  const json ping{{"type", "ping"}, {"i", 1}};
  const json pong{{"type", "pong"}, {"i", 2}};
  const json last{{"type", "bye"}};
  auto s1 = co_await a.send(ping);
  auto s2 = co_await a.send(last);
  auto r1 = co_await b.receive();
  auto s3 = co_await b.send(pong);
  auto r2 = co_await a.receive();
  auto r3 = co_await b.receive();
  if (s1.index() != 0 || s2.index() != 0 || s3.index() != 0) co_return;
  for (auto* r : {&r1, &r2, &r3}) {
    if (auto* j = std::get_if<json>(r)) got.push_back(*j);
  }
}

TEST(Channel, MessagesKeepTheirOrderInBothDirections) {
  SocketPair pair;
  Channel a(std::move(pair.client));
  Channel b(std::move(pair.server));
  std::vector<json> got;
  spawn(pair.context, exchange_both_ways(a, b, got));
  pair.run();
  ASSERT_EQ(got.size(), 3U);
  EXPECT_EQ(got[0].at("type"), "ping");
  EXPECT_EQ(got[1].at("type"), "pong");
  EXPECT_EQ(got[2].at("type"), "bye");
}

TEST(Channel, PeerCloseIsAnOrderlyClose) {
  SocketPair pair;
  Channel b(std::move(pair.server));
  pair.client.shutdown(tcp::socket::shutdown_both);
  pair.client.close();
  std::optional<std::variant<json, ChannelError>> received;
  spawn(pair.context, receive_into(b, received));
  pair.run();
  ASSERT_TRUE(received.has_value());
  ASSERT_TRUE(std::holds_alternative<ChannelError>(*received));
  const auto& error = std::get<ChannelError>(*received);
  EXPECT_TRUE(error.closed_by_peer) << error.message;
  EXPECT_FALSE(error.message.empty());
}

TEST(Channel, PeerCloseInsideAMessageFailsTheReceive) {
  // Header says 100 bytes, only 3 arrive, then the peer closes: the receive fails.
  SocketPair pair;
  Channel b(std::move(pair.server));
  const std::array<std::uint8_t, 7> partial{0, 0, 0, 100, '{', '"', 't'};
  asio::write(pair.client, asio::buffer(partial));
  pair.client.close();
  std::optional<std::variant<json, ChannelError>> received;
  spawn(pair.context, receive_into(b, received));
  pair.run();
  ASSERT_TRUE(received.has_value());
  EXPECT_TRUE(std::holds_alternative<ChannelError>(*received));
}

// BUG (minor): Channel::receive maps asio::error::eof to closed_by_peer = true whether it comes
// while reading the 4-byte header (an orderly close between messages) or in the middle of a
// frame whose header announced more bytes. A truncated message is a protocol failure, yet the
// slave reports it as "master closed the connection" (slave_server.cpp uses closed_by_peer to
// pick that sentence). ChannelError documents closed_by_peer as "an orderly close, not a
// protocol or network failure".
TEST(Channel, TruncatedMessageIsNotAnOrderlyClose) {
  SocketPair pair;
  Channel b(std::move(pair.server));
  const std::array<std::uint8_t, 7> partial{0, 0, 0, 100, '{', '"', 't'};
  asio::write(pair.client, asio::buffer(partial));
  pair.client.close();
  std::optional<std::variant<json, ChannelError>> received;
  spawn(pair.context, receive_into(b, received));
  pair.run();
  ASSERT_TRUE(received.has_value());
  ASSERT_TRUE(std::holds_alternative<ChannelError>(*received));
  EXPECT_FALSE(std::get<ChannelError>(*received).closed_by_peer)
      << std::get<ChannelError>(*received).message;
}

TEST(Channel, OversizedLengthIsRefusedNamingTheLimit) {
  SocketPair pair;
  Channel b(std::move(pair.server));
  const std::uint32_t n = kMaxFrameBytes + 1;
  const std::array<std::uint8_t, 4> header{static_cast<std::uint8_t>(n >> 24),
                                           static_cast<std::uint8_t>(n >> 16),
                                           static_cast<std::uint8_t>(n >> 8),
                                           static_cast<std::uint8_t>(n)};
  asio::write(pair.client, asio::buffer(header));
  std::optional<std::variant<json, ChannelError>> received;
  spawn(pair.context, receive_into(b, received));
  pair.run();
  ASSERT_TRUE(received.has_value());
  ASSERT_TRUE(std::holds_alternative<ChannelError>(*received));
  const auto& error = std::get<ChannelError>(*received);
  EXPECT_FALSE(error.closed_by_peer);
  EXPECT_NE(error.message.find("limit"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find(std::to_string(kMaxFrameBytes)), std::string::npos)
      << error.message;
}

TEST(Channel, PayloadWithoutTypeIsRefused) {
  SocketPair pair;
  Channel b(std::move(pair.server));
  const std::string payload = R"({"kind":"hello"})";
  std::string frame = {0, 0, 0, static_cast<char>(payload.size())};
  frame += payload;
  asio::write(pair.client, asio::buffer(frame));
  std::optional<std::variant<json, ChannelError>> received;
  spawn(pair.context, receive_into(b, received));
  pair.run();
  ASSERT_TRUE(received.has_value());
  ASSERT_TRUE(std::holds_alternative<ChannelError>(*received));
  EXPECT_NE(std::get<ChannelError>(*received).message.find("type"), std::string::npos);
}

TEST(Channel, CloseClosesTheSocket) {
  SocketPair pair;
  Channel a(std::move(pair.client));
  a.close();
  EXPECT_FALSE(a.is_open());
  EXPECT_EQ(a.peer(), "unknown peer");
}

}  // namespace
}  // namespace volley::control
