// DataListener: accepts data connections on loopback and routes them by their header.
#include "volley/transport/data_listener.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

namespace volley::transport {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

const asio::ip::address kLoopback = asio::ip::make_address("127.0.0.1");
constexpr std::uint32_t kToken = 0x1234abcdU;

struct Routed {
  ConnectionHeader header;
  bool open = false;
  tcp::socket socket;
};

struct ListenerFixture : ::testing::Test {
  asio::io_context context;
  std::vector<Routed> routed;
  DataListener listener{context, RunTokens{kToken, 1},
                        [this](const ConnectionHeader& h, tcp::socket s) {
                          const bool open = s.is_open();
                          routed.push_back(Routed{h, open, std::move(s)});
                        }};

  void open_and_start() {
    ASSERT_EQ(listener.open(kLoopback, 0, std::nullopt), "");
    ASSERT_NE(listener.port(), 0);
    listener.start();
  }

  tcp::socket connect_and_send(const std::array<std::uint8_t, kConnectionHeaderBytes>& bytes) {
    tcp::socket client(context);
    client.connect(tcp::endpoint(kLoopback, listener.port()));
    asio::write(client, asio::buffer(bytes));
    return client;
  }

  /// Runs the listener's context until `done` holds, at most 3 s.
  template <class Pred>
  void run_until(Pred done) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (!done() && std::chrono::steady_clock::now() < give_up) {
      context.run_for(std::chrono::milliseconds(5));
      if (context.stopped()) context.restart();
    }
    ASSERT_TRUE(done()) << "timed out";
  }
};

TEST_F(ListenerFixture, OpenOnPortZeroGivesAPort) {
  EXPECT_EQ(listener.port(), 0);  // not open yet
  ASSERT_EQ(listener.open(kLoopback, 0, std::nullopt), "");
  EXPECT_NE(listener.port(), 0);
}

TEST_F(ListenerFixture, OpenWithAWindowSize) {
  ASSERT_EQ(listener.open(kLoopback, 0, std::uint64_t{256} * 1024), "");
  EXPECT_NE(listener.port(), 0);
}

TEST_F(ListenerFixture, ValidHeaderIsRoutedWithItsFieldsAndAnOpenSocket) {
  open_and_start();
  tcp::socket client = connect_and_send(encode(ConnectionHeader{kToken, 2, 5, 9}));
  run_until([&] { return !routed.empty(); });
  ASSERT_EQ(routed.size(), 1U);
  EXPECT_EQ(routed[0].header, (ConnectionHeader{kToken, 2, 5, 9}));
  EXPECT_TRUE(routed[0].open);
  EXPECT_EQ(listener.rejected(), 0U);

  // The routed socket is the client's connection: bytes flow through it.
  const std::string hello = "hi";
  asio::write(client, asio::buffer(hello));
  std::array<char, 2> got{};
  asio::read(routed[0].socket, asio::buffer(got));
  EXPECT_EQ(std::string(got.data(), got.size()), hello);
}

TEST_F(ListenerFixture, SeveralConnectionsAreEachRouted) {
  open_and_start();
  std::vector<tcp::socket> clients;
  for (std::uint32_t i = 0; i < 4; ++i) {
    clients.push_back(connect_and_send(encode(ConnectionHeader{kToken, 0, i, 0})));
  }
  run_until([&] { return routed.size() == 4; });
  std::vector<std::uint32_t> strands;
  for (const auto& r : routed) strands.push_back(r.header.strand);
  std::sort(strands.begin(), strands.end());
  EXPECT_EQ(strands, (std::vector<std::uint32_t>{0, 1, 2, 3}));
}

TEST_F(ListenerFixture, WrongTokenIsRejected) {
  open_and_start();
  tcp::socket client = connect_and_send(encode(ConnectionHeader{kToken + 1, 0, 0, 0}));
  run_until([&] { return listener.rejected() == 1; });
  EXPECT_TRUE(routed.empty());
}

// A master's listener takes every slave's token, and only those: the header says which slave.
TEST(DataListenerTokens, EachSlavesTokenIsRoutedAndNoOther) {
  asio::io_context context;
  std::vector<std::uint32_t> tokens;
  DataListener listener(context, RunTokens{kToken, 3},
                        [&](const ConnectionHeader& h, tcp::socket) { tokens.push_back(h.token); });
  ASSERT_EQ(listener.open(kLoopback, 0, std::nullopt), "");
  listener.start();
  std::vector<tcp::socket> clients;
  for (const std::uint32_t token : {kToken + 2, kToken + 3, kToken - 1, kToken}) {
    clients.emplace_back(context);
    clients.back().connect(tcp::endpoint(kLoopback, listener.port()));
    asio::write(clients.back(), asio::buffer(encode(ConnectionHeader{token, 0, 0, 0})));
  }
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (tokens.size() + listener.rejected() < 4 && std::chrono::steady_clock::now() < give_up) {
    context.run_for(std::chrono::milliseconds(5));
    if (context.stopped()) context.restart();
  }
  std::sort(tokens.begin(), tokens.end());
  EXPECT_EQ(tokens, (std::vector<std::uint32_t>{kToken, kToken + 2}));
  EXPECT_EQ(listener.rejected(), 2U);
}

TEST_F(ListenerFixture, WrongMagicIsRejected) {
  open_and_start();
  auto bytes = encode(ConnectionHeader{kToken, 0, 0, 0});
  bytes[0] = 'X';
  tcp::socket client = connect_and_send(bytes);
  run_until([&] { return listener.rejected() == 1; });
  EXPECT_TRUE(routed.empty());
}

TEST_F(ListenerFixture, ShortHeaderThenCloseIsRejected) {
  open_and_start();
  tcp::socket client(context);
  client.connect(tcp::endpoint(kLoopback, listener.port()));
  const std::array<std::uint8_t, 5> partial{'V', 'L', 'Y', '1', 0};
  asio::write(client, asio::buffer(partial));
  client.close();
  run_until([&] { return listener.rejected() == 1; });
  EXPECT_TRUE(routed.empty());
}

TEST_F(ListenerFixture, RejectedConnectionDoesNotStopTheListener) {
  open_and_start();
  auto bad = encode(ConnectionHeader{kToken, 0, 0, 0});
  bad[3] = '2';
  tcp::socket c1 = connect_and_send(bad);
  tcp::socket c2 = connect_and_send(encode(ConnectionHeader{kToken, 1, 1, 1}));
  run_until([&] { return listener.rejected() == 1 && routed.size() == 1; });
  EXPECT_EQ(routed[0].header, (ConnectionHeader{kToken, 1, 1, 1}));
}

TEST_F(ListenerFixture, PortInUseIsAnErrorSentence) {
  tcp::acceptor busy(context, tcp::endpoint(kLoopback, 0));  // listening
  const std::uint16_t port = busy.local_endpoint().port();
  const std::string error = listener.open(kLoopback, port, std::nullopt);
  EXPECT_NE(error, "");
  EXPECT_NE(error.find(std::to_string(port)), std::string::npos) << error;
  EXPECT_NE(error.find("127.0.0.1"), std::string::npos) << error;
  EXPECT_EQ(listener.port(), 0);
}

TEST_F(ListenerFixture, CloseStopsAccepting) {
  open_and_start();
  const std::uint16_t port = listener.port();
  listener.close();
  EXPECT_EQ(listener.port(), 0);
  tcp::socket client(context);
  boost::system::error_code ec;
  client.connect(tcp::endpoint(kLoopback, port), ec);
  EXPECT_TRUE(ec) << "connected to a closed listener";
  context.run_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(routed.empty());
}

}  // namespace
}  // namespace volley::transport

namespace volley::transport {
namespace {

// A peer that never sends its header is closed at the deadline, and close() closes the rest: no
// descriptor stays pinned for the life of the slave.
TEST(DataListenerLimits, SilentConnectionsAreClosedAtTheDeadlineAndOnClose) {
  asio::io_context context;
  DataListener listener(
      context, RunTokens{kToken, 1}, [](const ConnectionHeader&, tcp::socket) {},
      std::chrono::milliseconds(200));
  ASSERT_EQ(listener.open(kLoopback, 0, std::nullopt), "");
  listener.start();
  tcp::socket silent(context);
  silent.connect(tcp::endpoint(kLoopback, listener.port()));
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  bool counted = false;
  while (std::chrono::steady_clock::now() < give_up && !counted) {
    context.run_for(std::chrono::milliseconds(5));
    counted = listener.pending() == 1;
  }
  ASSERT_TRUE(counted);
  while (std::chrono::steady_clock::now() < give_up && listener.pending() > 0) {
    context.run_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(listener.pending(), 0U);
  std::array<char, 1> byte{};
  boost::system::error_code ec;
  silent.read_some(asio::buffer(byte), ec);
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();

  tcp::socket second(context);
  second.connect(tcp::endpoint(kLoopback, listener.port()));
  while (std::chrono::steady_clock::now() < give_up + std::chrono::seconds(3) &&
         listener.pending() == 0) {
    context.run_for(std::chrono::milliseconds(5));
  }
  listener.close();
  EXPECT_EQ(listener.pending(), 0U);
  second.read_some(asio::buffer(byte), ec);
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
}

}  // namespace
}  // namespace volley::transport

namespace volley::transport {
namespace {

// Every connection closed without being routed costs one line naming its peer (escaped) and why;
// a routed one costs none. The slave throttles these lines (core/throttled_log.hpp).
TEST(DataListenerLog, EachClosedConnectionIsOneLineWithItsPeerAndTheReason) {
  asio::io_context context;
  std::vector<std::string> lines;
  std::size_t routed = 0;
  DataListener listener(
      context, RunTokens{kToken, 1}, [&](const ConnectionHeader&, tcp::socket) { ++routed; },
      std::chrono::milliseconds(200), [&](const std::string& line) { lines.push_back(line); });
  ASSERT_EQ(listener.open(kLoopback, 0, std::nullopt), "");
  listener.start();
  auto run_until = [&](std::size_t n) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (lines.size() < n && std::chrono::steady_clock::now() < give_up) {
      context.run_for(std::chrono::milliseconds(5));
    }
    ASSERT_EQ(lines.size(), n);
  };
  auto send = [&](const std::array<std::uint8_t, kConnectionHeaderBytes>& bytes) {
    tcp::socket client(context);
    client.connect(tcp::endpoint(kLoopback, listener.port()));
    asio::write(client, asio::buffer(bytes));
    return client;
  };
  auto peer = [](const tcp::socket& s) {
    return "data connection from 127.0.0.1:" + std::to_string(s.local_endpoint().port()) +
           " closed: ";
  };

  tcp::socket wrong = send(encode(ConnectionHeader{kToken ^ 1U, 0, 0, 0}));
  run_until(1);
  EXPECT_EQ(lines[0], peer(wrong) + "wrong run token (another run's connection, or a stranger's)");

  auto bytes = encode(ConnectionHeader{kToken, 0, 0, 0});
  bytes[0] = 'X';
  tcp::socket stranger = send(bytes);
  run_until(2);
  EXPECT_EQ(lines[1], peer(stranger) + "not a volley data header");

  tcp::socket silent(context);
  silent.connect(tcp::endpoint(kLoopback, listener.port()));
  run_until(3);
  EXPECT_EQ(lines[2], peer(silent) + "no header within 200 ms (volley serve --header-timeout)");

  tcp::socket good = send(encode(ConnectionHeader{kToken, 0, 0, 0}));
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (routed == 0 && std::chrono::steady_clock::now() < give_up) {
    context.run_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(routed, 1U);
  EXPECT_EQ(lines.size(), 3U);
  EXPECT_EQ(listener.rejected(), 3U);
}

}  // namespace
}  // namespace volley::transport

namespace volley::transport {
namespace {

// Header reads in flight are shared out by source address: one address's silent connections
// beyond its share make room for its newer ones, a full listener makes room by closing the
// oldest of the address that holds the most, and a connection still owing its header is never
// "queued" (no sign of work on its way): so strangers cannot keep a peer from another address
// out, nor look like activity.
TEST(DataListenerLimits, SilentConnectionsFromOneAddressCannotKeepAnotherAddressOut) {
  asio::io_context context;
  std::vector<std::string> lines;
  std::size_t routed = 0;
  DataListener listener(
      context, RunTokens{kToken, 1}, [&](const ConnectionHeader&, tcp::socket) { ++routed; },
      std::chrono::seconds(30), [&](const std::string& line) { lines.push_back(line); },
      SourceQuota::Limits{2, 4});
  ASSERT_EQ(listener.open(kLoopback, 0, std::nullopt), "");
  listener.start();
  auto run_until = [&](const auto& done) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done() && std::chrono::steady_clock::now() < give_up) {
      context.run_for(std::chrono::milliseconds(5));
    }
    return done();
  };
  std::vector<tcp::socket> held;
  auto connect_from = [&](const char* source) -> tcp::socket& {
    held.emplace_back(context);
    held.back().open(tcp::v4());
    held.back().bind(tcp::endpoint(asio::ip::make_address(source), 0));
    held.back().connect(tcp::endpoint(kLoopback, listener.port()));
    return held.back();
  };
  auto closed_by_listener = [](tcp::socket& s) {
    std::array<char, 1> byte{};
    boost::system::error_code ec;
    s.read_some(asio::buffer(byte), ec);
    return ec == asio::error::eof || ec == asio::error::connection_reset;
  };
  auto named = [&](std::size_t i) {
    return "data connection from 127.0.0." + std::string(i < 3 ? "2" : "3") + ":" +
           std::to_string(held[i].local_endpoint().port()) + " closed: ";
  };
  held.reserve(8);
  connect_from("127.0.0.2");
  connect_from("127.0.0.2");
  ASSERT_TRUE(run_until([&] { return listener.pending() == 2; }));
  EXPECT_EQ(listener.queued(), 0U) << "a connection owing its header is not work on its way";
  connect_from("127.0.0.2");  // beyond its address's share: its oldest makes room
  ASSERT_TRUE(run_until([&] { return lines.size() == 1; }));
  EXPECT_EQ(lines[0], named(0) +
                          "closed to make room for a newer one from its address, which "
                          "held 2 connections waiting for their header, the most one "
                          "address may");
  EXPECT_TRUE(closed_by_listener(held[0]));
  connect_from("127.0.0.3");
  connect_from("127.0.0.3");
  ASSERT_TRUE(run_until([&] { return listener.pending() == 4; }));  // full
  // A peer from a third address with its header: it takes the oldest place of the heaviest.
  auto& peer = connect_from("127.0.0.1");
  asio::write(peer, asio::buffer(encode(ConnectionHeader{kToken, 0, 0, 0})));
  ASSERT_TRUE(run_until([&] { return routed == 1 && lines.size() == 2; }));
  EXPECT_EQ(lines[1], named(1) +
                          "closed to make room: 4 connections waited for their header, "
                          "the most this listener holds, and its address held the most "
                          "of them");
  EXPECT_TRUE(closed_by_listener(held[1]));
  // The rest are told when the listener closes: every stranger's connection is counted.
  listener.close();
  EXPECT_EQ(lines.size(), 5U);
  EXPECT_EQ(listener.rejected(), 5U);
  EXPECT_EQ(lines.back(), named(4) + "the run ended before its header came");
}

}  // namespace
}  // namespace volley::transport

namespace volley::transport {
namespace {

/// The lowest descriptor number free in this process.
int lowest_free_descriptor_now() {
  const int probe = ::fcntl(0, F_DUPFD_CLOEXEC, 0);
  ::close(probe);
  return probe;
}

// A storm of connections waiting to be read must not take a process's last descriptors (then
// every open(2), pipe(2) and socket(2) in the process fails: a sanitizer's probe reported a
// false "invalid vptr", and /proc reads and output files fail alike). At its ceiling the listener
// stops accepting, the rest wait in the accept queue, and it accepts them as descriptors free.
TEST(DataListenerDescriptors, StopsAtItsCeilingAndTakesTheRestAsDescriptorsFree) {
  asio::io_context context;
  std::vector<tcp::socket> routed;
  DataListener listener(context, RunTokens{kToken, 1}, [&](const ConnectionHeader&, tcp::socket s) {
    routed.push_back(std::move(s));
  });
  ASSERT_EQ(listener.open(kLoopback, 0, std::nullopt), "");
  EXPECT_EQ(listener.descriptor_ceiling(), default_descriptor_ceiling());
  constexpr int kClients = 30;
  std::vector<tcp::socket> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back(context);
    clients.back().connect(tcp::endpoint(kLoopback, listener.port()));
    asio::write(
        clients.back(),
        asio::buffer(encode(ConnectionHeader{kToken, 0, static_cast<std::uint32_t>(i), 0})));
  }
  // Ten descriptors to go before the ceiling.
  const int ceiling = lowest_free_descriptor_now() + 10;
  listener.set_descriptor_ceiling(ceiling);
  listener.start();
  const auto run_for = [&](std::chrono::milliseconds how_long) {
    context.run_for(how_long);
    if (context.stopped()) context.restart();
  };
  run_for(std::chrono::milliseconds(300));
  // The ten below the ceiling: none at or above it.
  EXPECT_EQ(routed.size(), 10U);
  EXPECT_EQ(lowest_free_descriptor_now(), ceiling);
  EXPECT_GT(listener.queued(), 0U);
  // Five close: five more are taken into their places, and again none at or above the ceiling
  // (however often that happens, the process never holds more).
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 5; ++i) routed[routed.size() - 1 - static_cast<std::size_t>(i)].close();
    run_for(std::chrono::milliseconds(300));
    EXPECT_EQ(routed.size(), 15U + 5U * static_cast<std::size_t>(round)) << "round " << round;
    EXPECT_EQ(lowest_free_descriptor_now(), ceiling) << "round " << round;
  }
  // All close as they are routed: every connection is taken in the end.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (routed.size() < kClients && std::chrono::steady_clock::now() < give_up) {
    for (auto& s : routed) {
      boost::system::error_code ignored;
      s.close(ignored);
    }
    run_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(routed.size(), static_cast<std::size_t>(kClients));
  EXPECT_EQ(listener.rejected(), 0U);
}

}  // namespace
}  // namespace volley::transport
