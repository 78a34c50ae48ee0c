// The accepting side of a UDP "connection" (UdpListener) with hellos from source addresses other
// than the default one (a connect with srcaddr=): each sender is a flow of its own, even with the
// same header, and the socket made for it is connected to the address and port the hello came
// from, so the flow's datagrams are matched both ways.
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <gtest/gtest.h>

#include "volley/transport/connection_header.hpp"
#include "volley/transport/datagram.hpp"
#include "volley/transport/udp_listener.hpp"

namespace volley::transport {
namespace {

namespace asio = boost::asio;
using asio::ip::udp;
using namespace std::chrono_literals;

constexpr std::uint32_t kUdpToken = 0x5eed;

/// `s` blocking, its receives giving up after 5 s (a hang guard).
void block_for_at_most_5s(udp::socket& s) {
  s.non_blocking(false);
  const timeval limit{5, 0};
  ASSERT_EQ(::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit), 0);
}

/// A socket bound to `address` (blocking, at most 5 s).
udp::socket sender_from(asio::io_context& context, const std::string& address) {
  udp::socket s(context, udp::endpoint(asio::ip::make_address(address), 0));
  block_for_at_most_5s(s);
  return s;
}

/// The port of `ack` (the listener's answer to a hello) on `s`; nullopt if none came.
std::optional<std::uint16_t> answer_on(udp::socket& s) {
  std::array<char, 64> ack{};
  udp::endpoint from;
  boost::system::error_code ec;
  const std::size_t n = s.receive_from(asio::buffer(ack), from, 0, ec);
  if (ec) return std::nullopt;
  return decode_ack(std::span<const char>(ack.data(), n), kUdpToken);
}

TEST(UdpListener, EachSourceAddressIsAFlowOfItsOwnConnectedToIt) {
  asio::io_context context;
  std::vector<std::pair<ConnectionHeader, udp::socket>> routed;
  UdpListener listener(
      context, RunTokens{kUdpToken, 1},
      [&](const ConnectionHeader& h, udp::socket s) { routed.emplace_back(h, std::move(s)); });
  const auto loopback = asio::ip::make_address("127.0.0.1");
  std::uint16_t port = 0;
  {
    udp::socket probe(context, udp::endpoint(loopback, 0));  // a port free now
    port = probe.local_endpoint().port();
  }
  ASSERT_EQ(listener.open(loopback, port, std::nullopt), "");
  listener.start();

  // The same strand and connection from two source addresses (two masters, or one strand's
  // connects across a srcaddr= range): two flows.
  const ConnectionHeader who{kUdpToken, 0, 3, 0};
  const auto hello = encode(who);
  std::vector<udp::socket> senders;
  for (const char* address : {"127.0.0.2", "127.0.0.3"}) {
    senders.push_back(sender_from(context, address));
    senders.back().send_to(asio::buffer(hello), udp::endpoint(loopback, port));
  }
  const auto give_up = std::chrono::steady_clock::now() + 10s;
  while (routed.size() < 2 && std::chrono::steady_clock::now() < give_up) context.run_for(10ms);
  ASSERT_EQ(routed.size(), 2U);
  EXPECT_EQ(listener.rejected(), 0U);

  for (auto& sender : senders) {
    const udp::endpoint me = sender.local_endpoint();
    SCOPED_TRACE(me.address().to_string());
    const std::optional<std::uint16_t> data_port = answer_on(sender);
    ASSERT_TRUE(data_port.has_value());
    const auto flow = std::find_if(routed.begin(), routed.end(), [&](const auto& r) {
      return r.second.local_endpoint().port() == *data_port;
    });
    ASSERT_NE(flow, routed.end());
    EXPECT_EQ(flow->first.strand, 3U);
    // The flow's socket is connected to the sender: the source address, not the default one.
    EXPECT_EQ(flow->second.remote_endpoint(), me);
    // And datagrams pass both ways on it.
    sender.connect(udp::endpoint(loopback, *data_port));
    const std::string out = "to the slave from " + me.address().to_string();
    sender.send(asio::buffer(out));
    std::array<char, 64> got{};
    block_for_at_most_5s(flow->second);
    EXPECT_EQ(std::string(got.data(), flow->second.receive(asio::buffer(got))), out);
    flow->second.send(asio::buffer(std::string("back")));
    EXPECT_EQ(std::string(got.data(), sender.receive(asio::buffer(got))), "back");
  }
  listener.close();
}

}  // namespace
}  // namespace volley::transport
