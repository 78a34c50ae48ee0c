// Channel: framed JSON messages over a real loopback TCP connection.
#include "volley/control/channel.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>

#include "volley/control/codec.hpp"
#include "volley/control/message.hpp"

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

asio::awaitable<void> send_then_receive(
    Channel& from, Channel& to, json message,
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
  ASSERT_TRUE(std::holds_alternative<json>(*received)) << std::get<ChannelError>(*received).message;
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
  const std::array<std::uint8_t, 4> header{
      static_cast<std::uint8_t>(n >> 24), static_cast<std::uint8_t>(n >> 16),
      static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)};
  asio::write(pair.client, asio::buffer(header));
  std::optional<std::variant<json, ChannelError>> received;
  spawn(pair.context, receive_into(b, received));
  pair.run();
  ASSERT_TRUE(received.has_value());
  ASSERT_TRUE(std::holds_alternative<ChannelError>(*received));
  const auto& error = std::get<ChannelError>(*received);
  EXPECT_FALSE(error.closed_by_peer);
  EXPECT_NE(error.message.find("limit"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find(std::to_string(kMaxFrameBytes)), std::string::npos) << error.message;
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

TEST(Channel, CloseClosesTheSocketAndKeepsThePeersName) {
  SocketPair pair;
  const std::string peer = fmt::format("127.0.0.1:{}", pair.server.local_endpoint().port());
  Channel a(std::move(pair.client));
  a.close();
  EXPECT_FALSE(a.is_open());
  // Errors after a reset or a close still say whom they were about.
  EXPECT_EQ(a.peer(), peer);
}

/// The master's side of a control connection as the master makes it: with async_connect, which
/// registers the socket for (edge-triggered) writability in the reactor.
struct ConnectedLikeTheMaster {
  asio::io_context context;
  tcp::socket server{context};
  std::optional<Channel> channel;

  ConnectedLikeTheMaster() {
    tcp::acceptor acceptor(context, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    tcp::socket client(context);
    boost::system::error_code connected = asio::error::would_block;
    client.async_connect(acceptor.local_endpoint(),
                         [&](const boost::system::error_code& ec) { connected = ec; });
    acceptor.accept(server);
    context.run_for(std::chrono::seconds(3));
    context.restart();
    EXPECT_FALSE(connected) << connected.message();
    channel.emplace(std::move(client));
  }
};

asio::awaitable<void> pause(asio::io_context& context, std::chrono::milliseconds how_long) {
  asio::steady_timer timer(context);
  timer.expires_after(how_long);
  co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
}

/// Three pings 50 ms apart (time for a reset to arrive and be seen); how long the last took.
asio::awaitable<void> send_three_pings(
    ConnectedLikeTheMaster& link, std::vector<std::variant<std::monostate, ChannelError>>& sent,
    std::chrono::steady_clock::duration& last_took) {
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    json ping = message("ping");
    sent.push_back(co_await link.channel->send(std::move(ping)));
    last_took = std::chrono::steady_clock::now() - start;
    co_await pause(link.context, std::chrono::milliseconds(50));
  }
}

asio::awaitable<void> receive_then_ping(
    ConnectedLikeTheMaster& link, std::optional<std::variant<json, ChannelError>>& received,
    std::optional<std::variant<std::monostate, ChannelError>>& sent) {
  received = co_await link.channel->receive();
  json ping = message("ping");
  sent = co_await link.channel->send(std::move(ping));
}

TEST(Channel, ASendAfterAFailedSendFailsAtOnce) {
  // A killed slave must be noticed at once, not after the 5 s send guard: the slave's kernel
  // closed the connection; the master's next send goes out and draws a reset, the one after
  // fails (EPIPE), and a later one (abort, bye) must fail too. Boost.Asio's reactor stops
  // trying writes at once on a socket after a write that moved fewer bytes than asked (an error
  // moves none) and waits for an edge-triggered writability event instead; on a connection
  // already reset, whose last event has been consumed, none ever comes.
  ConnectedLikeTheMaster link;
  link.server.close();  // the peer goes away (its kernel sends a FIN; our next bytes draw a reset)
  std::vector<std::variant<std::monostate, ChannelError>> sent;
  std::chrono::steady_clock::duration last_took{};
  spawn(link.context, send_three_pings(link, sent, last_took));
  link.context.run_for(std::chrono::seconds(20));
  ASSERT_EQ(sent.size(), 3U);
  ASSERT_TRUE(std::holds_alternative<ChannelError>(sent[2]));
  EXPECT_LT(last_took, std::chrono::seconds(1)) << std::get<ChannelError>(sent[2]).message;
  // It names the peer, though the socket no longer knows it.
  EXPECT_NE(std::get<ChannelError>(sent[2]).message.find("127.0.0.1:"), std::string::npos)
      << std::get<ChannelError>(sent[2]).message;
}

TEST(Channel, ASendAfterThePeerClosedSaysItClosed) {
  // The reader saw the peer close: a send after that does not go out into a dead connection
  // (the first would seem to succeed), it fails with the reader's reason.
  ConnectedLikeTheMaster link;
  link.server.close();
  std::optional<std::variant<json, ChannelError>> received;
  std::optional<std::variant<std::monostate, ChannelError>> sent;
  spawn(link.context, receive_then_ping(link, received, sent));
  link.context.run_for(std::chrono::seconds(20));
  ASSERT_TRUE(received && std::holds_alternative<ChannelError>(*received));
  ASSERT_TRUE(sent.has_value());
  ASSERT_TRUE(std::holds_alternative<ChannelError>(*sent));
  EXPECT_TRUE(std::get<ChannelError>(*sent).closed_by_peer);
  EXPECT_NE(std::get<ChannelError>(*sent).message.find("closed the control connection"),
            std::string::npos)
      << std::get<ChannelError>(*sent).message;
}

}  // namespace
}  // namespace volley::control
