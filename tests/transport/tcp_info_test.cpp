// read_tcp_info on real sockets: a connection that moved data has a round-trip time, a window
// and segments sent; a listener, a UDP socket and a closed descriptor have no TCP state.
#include "volley/transport/tcp_info.hpp"

#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <string>

namespace volley::transport {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

TEST(TcpInfo, AConnectionThatMovedDataHasItsState) {
  asio::io_context context;
  tcp::acceptor listener(context, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  tcp::socket client(context);
  client.connect(listener.local_endpoint());
  tcp::socket server = listener.accept();
  const std::string data(256 * 1024, 'x');
  std::string got(data.size(), '\0');
  for (int i = 0; i < 4; ++i) {
    asio::write(client, asio::buffer(data));
    asio::read(server, asio::buffer(got));
  }
  const auto sender = read_tcp_info(client.native_handle());
  ASSERT_TRUE(sender.has_value());
  EXPECT_GT(sender->rtt_us, 0U);
  EXPECT_GT(sender->cwnd, 0U);
  EXPECT_GT(sender->snd_mss, 0U);
  EXPECT_GT(sender->segs_out, 0U);
  // Busy time may round to 0 on loopback, where every segment is acknowledged at once.
  EXPECT_GE(sender->busy_us, sender->rwnd_limited_us);
  EXPECT_GE(sender->busy_us, sender->sndbuf_limited_us);
  EXPECT_EQ(sender->pacing_rate == stats::TcpReading::kUnset || sender->pacing_rate > 0, true);
  const auto receiver = read_tcp_info(server.native_handle());
  ASSERT_TRUE(receiver.has_value());
  EXPECT_GT(receiver->rcv_space, 0U);
  // Not connections: a listener, a UDP socket, no socket at all.
  EXPECT_FALSE(read_tcp_info(listener.native_handle()).has_value());
  asio::ip::udp::socket udp(context, asio::ip::udp::endpoint(asio::ip::address_v4::loopback(), 0));
  EXPECT_FALSE(read_tcp_info(udp.native_handle()).has_value());
  EXPECT_FALSE(read_tcp_info(-1).has_value());
}

}  // namespace
}  // namespace volley::transport
