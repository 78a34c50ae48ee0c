// closed_at_header: real loopback TCP pairs, the opening side's view after its header.
#include "volley/transport/closed_at_header.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "volley/transport/connection_header.hpp"

namespace volley::transport {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

/// A connected pair on loopback whose opening side has sent its header.
struct ClosedPair {
  asio::io_context context;
  tcp::acceptor acceptor{context, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  tcp::socket opened{context};
  tcp::socket accepted{context};
  ClosedPair() {
    opened.connect(acceptor.local_endpoint());
    accepted = acceptor.accept();
    asio::write(opened, asio::buffer(encode(ConnectionHeader{1, 0, 0, 0})));
  }
  /// Lets the peer's FIN or data and the acknowledgements arrive (loopback: at once; a hang
  /// guard, not a timing).
  static void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(50)); }
};

TEST(ClosedAtHeader, APeerThatClosedAfterTheHeaderIsSeen) {
  ClosedPair p;
  std::array<std::uint8_t, kConnectionHeaderBytes> header{};
  asio::read(p.accepted, asio::buffer(header));
  p.accepted.close();
  ClosedPair::settle();
  EXPECT_TRUE(closed_at_header(p.opened.native_handle()));
}

TEST(ClosedAtHeader, APeerThatClosedWithoutReadingTheHeaderIsSeen) {
  ClosedPair p;
  ClosedPair::settle();
  p.accepted.close();  // unread data: the kernel resets the connection
  ClosedPair::settle();
  EXPECT_TRUE(closed_at_header(p.opened.native_handle()));
}

TEST(ClosedAtHeader, AConnectionThatCarriedDataEitherWayIsNot) {
  {
    ClosedPair p;
    asio::write(p.accepted, asio::buffer("x", 1));  // the peer sent a byte
    p.accepted.close();
    ClosedPair::settle();
    EXPECT_FALSE(closed_at_header(p.opened.native_handle()));
  }
  {
    ClosedPair p;
    asio::write(p.opened, asio::buffer("x", 1));  // the peer took a byte beyond the header
    ClosedPair::settle();
    p.accepted.close();
    ClosedPair::settle();
    EXPECT_FALSE(closed_at_header(p.opened.native_handle()));
  }
}

TEST(ClosedAtHeader, NotASocketIsNot) {
  EXPECT_FALSE(closed_at_header(-1));
  EXPECT_FALSE(closed_at_header(0));
}

}  // namespace
}  // namespace volley::transport
