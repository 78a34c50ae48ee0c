// TLS connections over a real loopback TCP pair: a pinned certificate is trusted and carries
// bytes; another certificate, or a peer that does not speak TLS, fails the handshake with
// OpenSSL's reason; the identity files are checked as the control key is.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/write.hpp>

#include "support/tcp_pair.hpp"
#include "support/temp_dir.hpp"
#include "volley/transport/tls_connection.hpp"
#include "volley/transport/tls_identity.hpp"
#include "volley/transport/tls_setup.hpp"

namespace volley::transport {
namespace {

namespace asio = boost::asio;

std::shared_ptr<const TlsIdentity> fresh_identity() {
  auto made = TlsIdentity::generate();
  EXPECT_TRUE(std::holds_alternative<TlsIdentity>(made));
  return std::make_shared<const TlsIdentity>(std::get<TlsIdentity>(std::move(made)));
}

std::shared_ptr<const TlsSetup> setup_for(std::shared_ptr<const TlsIdentity> identity,
                                          std::vector<std::string> pins) {
  TlsUses uses;
  uses.connects.push_back({});
  uses.accepts.push_back({});
  auto made = TlsSetup::make(uses, std::move(identity), TlsTrust{std::move(pins), {}});
  EXPECT_TRUE(made.index() == 0) << std::get<std::string>(made);
  return std::get<0>(std::move(made));
}

/// Runs the handshake of `tls` to its end, waiting on the socket as a strand does; `why` is
/// empty when it succeeded.
asio::awaitable<void> handshake(TlsConnection& tls, std::string& why, bool& done) {
  for (;;) {
    const IoResult step = tls.handshake_step(why);
    if (!step.ec) break;
    if (!step.would_block()) break;
    auto [ec] = co_await tls.wait(tls.want());
    if (ec) {
      why = ec.message();
      break;
    }
  }
  done = true;
}

/// Both ends of a loopback pair as TLS: the accepted end the server, the other the client.
struct TlsPair {
  test::TcpPair tcp;
  std::optional<TlsConnection> server;
  std::optional<TlsConnection> client;
  std::string server_why;
  std::string client_why;

  TlsPair(const TlsSetup& setup) {
    tcp.peer->non_blocking(true);
    server.emplace(std::move(*tcp.ours));
    client.emplace(TcpConnection(std::move(*tcp.peer)));
    EXPECT_FALSE(server->begin(setup.context(TlsRole::kServer, {}), TlsRole::kServer, nullptr));
    EXPECT_FALSE(client->begin(setup.context(TlsRole::kClient, {}), TlsRole::kClient, nullptr));
  }
  /// Both handshakes to their ends; false when they hung.
  bool handshake_both() {
    bool server_done = false;
    bool client_done = false;
    asio::co_spawn(*tcp.io, handshake(*server, server_why, server_done), asio::detached);
    asio::co_spawn(*tcp.io, handshake(*client, client_why, client_done), asio::detached);
    tcp.io->run_for(std::chrono::seconds(10));
    return server_done && client_done;
  }
};

TEST(TlsConnection, APinnedCertificateIsTrustedAndCarriesBytes) {
  const auto identity = fresh_identity();
  const auto setup = setup_for(identity, {identity->fingerprint()});
  TlsPair pair(*setup);
  ASSERT_TRUE(pair.handshake_both());
  EXPECT_EQ(pair.client_why, "");
  EXPECT_EQ(pair.server_why, "");
  const TlsHandshakeResult result = pair.client->handshake_result();
  EXPECT_EQ(result.version, "TLSv1.3");
  EXPECT_FALSE(result.resumed);
  const std::string hello = "application bytes";
  ASSERT_EQ(pair.client->try_write(hello).bytes, hello.size());
  std::array<char, 64> got{};
  std::size_t n = 0;
  bool read_done = false;
  asio::co_spawn(
      *pair.tcp.io,
      [&]() -> asio::awaitable<void> {
        auto [ec, bytes] = co_await pair.server->read(got);
        EXPECT_FALSE(ec) << ec.message();
        n = bytes;
        read_done = true;
      },
      asio::detached);
  pair.tcp.io->restart();
  pair.tcp.io->run_for(std::chrono::seconds(10));
  ASSERT_TRUE(read_done);
  EXPECT_EQ(std::string(got.data(), n), hello) << "application bytes, as written";
}

TEST(TlsConnection, ACertificateThatIsNotThePinnedOneFailsTheHandshakeAndSaysSo) {
  const auto identity = fresh_identity();
  const auto other = fresh_identity();
  const auto setup = setup_for(identity, {other->fingerprint()});
  TlsPair pair(*setup);
  ASSERT_TRUE(pair.handshake_both());
  EXPECT_NE(pair.client_why.find("certificate verify failed"), std::string::npos)
      << pair.client_why;
  EXPECT_NE(pair.client_why.find("not the one the peer announced"), std::string::npos)
      << pair.client_why;
  EXPECT_NE(pair.server_why, "") << "the server sees the client's alert";
}

TEST(TlsConnection, APeerThatDoesNotSpeakTlsFailsTheHandshakeWithOpenSslsReason) {
  const auto identity = fresh_identity();
  const auto setup = setup_for(identity, {identity->fingerprint()});
  test::TcpPair tcp;
  TlsConnection server(std::move(*tcp.ours));
  ASSERT_FALSE(server.begin(setup->context(TlsRole::kServer, {}), TlsRole::kServer, nullptr));
  const std::string plain = "GET / HTTP/1.0\r\n\r\n";
  asio::write(*tcp.peer, asio::buffer(plain));
  std::string why;
  bool done = false;
  asio::co_spawn(*tcp.io, handshake(server, why, done), asio::detached);
  tcp.io->run_for(std::chrono::seconds(10));
  ASSERT_TRUE(done);
  EXPECT_NE(why, "") << "plain bytes are not a ClientHello";
}

/// A connected loopback pair on `io`: the accepted end and the connecting end, both
/// non-blocking, with segments of at most `mss` bytes both ways. A small MSS keeps the kernel
/// from waking a reader below its mark for a receive window about to close (it does once the
/// window left is under one segment), so that a mark above what comes is seen to hold.
std::pair<asio::ip::tcp::socket, asio::ip::tcp::socket> tls_test_pair(asio::io_context& io,
                                                                      int mss) {
  const asio::ip::tcp::endpoint loopback(asio::ip::make_address("127.0.0.1"), 0);
  asio::ip::tcp::acceptor acceptor(io);
  acceptor.open(loopback.protocol());
  ::setsockopt(acceptor.native_handle(), IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss);
  acceptor.bind(loopback);
  acceptor.listen();
  asio::ip::tcp::socket connecting(io);
  connecting.open(loopback.protocol());
  ::setsockopt(connecting.native_handle(), IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof mss);
  connecting.connect(acceptor.local_endpoint());
  asio::ip::tcp::socket accepted(io);
  acceptor.accept(accepted);
  accepted.non_blocking(true);
  connecting.non_blocking(true);
  return {std::move(accepted), std::move(connecting)};
}

/// Moves what `from` holds now to `to` (appending it to `seen`, when given).
void tls_test_relay(asio::ip::tcp::socket& from, asio::ip::tcp::socket& to,
                    std::string* seen = nullptr) {
  std::array<char, 16384> chunk{};
  for (;;) {
    boost::system::error_code ec;
    const std::size_t n = from.read_some(asio::buffer(chunk), ec);
    if (ec || n == 0) return;
    if (seen != nullptr) seen->append(chunk.data(), n);
    to.non_blocking(false);
    asio::write(to, asio::buffer(chunk.data(), n));
    to.non_blocking(true);
  }
}

int tls_wake_mark(TlsConnection& c) {
  int mark = 0;
  socklen_t len = sizeof mark;
  ::getsockopt(c.tcp().socket().native_handle(), SOL_SOCKET, SO_RCVLOWAT, &mark, &len);
  return mark;
}

/// A TLS client and server whose bytes pass through the test, which holds the middle: the
/// client's socket is connected to `to_client`, the server's to `to_server`, and the test moves
/// bytes between `to_client` and `to_server` when it chooses.
struct RelayedTls {
  asio::io_context io{1};
  std::optional<TlsConnection> client;
  std::optional<TlsConnection> server;
  std::optional<asio::ip::tcp::socket> to_client;
  std::optional<asio::ip::tcp::socket> to_server;

  explicit RelayedTls(const TlsSetup& setup) {
    auto [client_end, middle_a] = tls_test_pair(io, 16384);
    auto [server_end, middle_b] = tls_test_pair(io, 1400);
    to_client.emplace(std::move(client_end));
    to_server.emplace(std::move(middle_b));
    client.emplace(TcpConnection(std::move(middle_a)));
    server.emplace(TcpConnection(std::move(server_end)));
    EXPECT_FALSE(server->begin(setup.context(TlsRole::kServer, {}), TlsRole::kServer, nullptr));
    EXPECT_FALSE(client->begin(setup.context(TlsRole::kClient, {}), TlsRole::kClient, nullptr));
  }
  /// Both handshakes, the test relaying every byte at once; false when one failed or hung.
  bool handshake() {
    bool client_done = false;
    bool server_done = false;
    for (int i = 0; i < 2000 && !(client_done && server_done); ++i) {
      std::string why;
      for (auto [tls, done] : {std::pair{&*client, &client_done}, {&*server, &server_done}}) {
        if (*done) continue;
        const IoResult step = tls->handshake_step(why);
        if (!step.ec) *done = true;
        if (step.ec && !step.would_block()) return false;
      }
      tls_test_relay(*to_client, *to_server);
      tls_test_relay(*to_server, *to_client);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return client_done && server_done;
  }
};

/// Whether `tls`'s socket becomes readable (its mark reached) within `limit`.
bool tls_test_readable(TlsConnection& tls, std::chrono::milliseconds limit) {
  pollfd p{tls.tcp().socket().native_handle(), POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(limit.count())) == 1;
}

TEST(TlsConnection, TheWakeUpMarkLeavesOutTheRecordOpenSslHasBegunToRead) {
  const auto identity = fresh_identity();
  const auto setup = setup_for(identity, {identity->fingerprint()});
  RelayedTls pair(*setup);
  ASSERT_TRUE(pair.handshake());
  // The session ticket the server sends after its handshake: read, so that only records of the
  // message follow.
  tls_test_relay(*pair.to_server, *pair.to_client);
  std::array<char, 256> scratch{};
  while (pair.client->try_read(scratch).bytes > 0) {
  }
  // One message of 64 KiB: four records, which the test holds.
  std::string message(std::size_t{64} * 1024, '\0');
  for (std::size_t i = 0; i < message.size(); ++i) message[i] = static_cast<char>(i * 7 % 251);
  std::size_t written = 0;
  std::string wire;
  while (written < message.size()) {
    const IoResult w = pair.client->try_write(std::span(message).subspan(written));
    written += w.bytes;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    boost::system::error_code ec;
    std::array<char, 65536> chunk{};
    for (std::size_t n; (n = pair.to_client->read_some(asio::buffer(chunk), ec)) > 0 && !ec;) {
      wire.append(chunk.data(), n);
    }
  }
  for (int i = 0; i < 100 && wire.size() <= message.size() + 64; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    boost::system::error_code ec;
    std::array<char, 65536> chunk{};
    for (std::size_t n; (n = pair.to_client->read_some(asio::buffer(chunk), ec)) > 0 && !ec;) {
      wire.append(chunk.data(), n);
    }
  }
  ASSERT_GT(wire.size(), message.size() + 4 * 16) << "four records, each with its overhead";
  // The server's OpenSSL takes the first record's header and most of its body, and can open
  // nothing yet.
  const std::size_t first = 5 + 16000;
  asio::write(*pair.to_server, asio::buffer(wire.data(), first));
  ASSERT_TRUE(tls_test_readable(*pair.server, std::chrono::seconds(5)));
  std::vector<char> got(std::size_t{256} * 1024);
  EXPECT_TRUE(pair.server->try_read(got).would_block());
  EXPECT_TRUE(pair.server->read_drained());
  // All 64 KiB are still to come, but 16,005 of their bytes are inside OpenSSL already: fewer
  // than 64 KiB come on the socket, and a mark of 64 KiB would never be reached.
  pair.server->wake_after(message.size());
  EXPECT_GT(tls_wake_mark(*pair.server), 1) << "a mark for the bytes sure to come";
  EXPECT_LE(static_cast<std::size_t>(tls_wake_mark(*pair.server)), wire.size() - first);
  asio::write(*pair.to_server, asio::buffer(wire.data() + first, wire.size() - first));
  ASSERT_TRUE(tls_test_readable(*pair.server, std::chrono::seconds(2)))
      << "the reader must wake once the rest of the message is there";
  const IoResult r = pair.server->try_read(got);
  ASSERT_FALSE(r.ec) << r.ec.message();
  EXPECT_EQ(r.bytes, message.size()) << "one read takes every record there";
  EXPECT_EQ(std::string(got.data(), r.bytes), message);
  // No more to come than OpenSSL may hold: no mark.
  pair.server->wake_after(17'000);
  EXPECT_EQ(tls_wake_mark(*pair.server), 1);
}

TEST(TlsIdentity, FilesAreCheckedAndNamed) {
  const test::TempDir dir;
  const auto one = fresh_identity();
  const auto two = fresh_identity();
  const auto cert = dir.write("c.pem", one->cert_pem());
  const auto key = dir.write("k.pem", one->key_pem());
  const auto wrong_key = dir.write("other.pem", two->key_pem());
  ::chmod(key.c_str(), 0600);
  ::chmod(wrong_key.c_str(), 0600);
  std::string warning;
  auto ok = TlsIdentity::load(cert, key, warning);
  ASSERT_TRUE(std::holds_alternative<TlsIdentity>(ok));
  EXPECT_EQ(std::get<TlsIdentity>(ok).fingerprint(), one->fingerprint());
  EXPECT_EQ(warning, "");

  auto mismatch = TlsIdentity::load(cert, wrong_key, warning);
  ASSERT_TRUE(std::holds_alternative<std::string>(mismatch));
  EXPECT_NE(std::get<std::string>(mismatch).find("is not the key of the certificate"),
            std::string::npos);
  EXPECT_NE(std::get<std::string>(mismatch).find(wrong_key.string()), std::string::npos);

  auto missing = TlsIdentity::load((dir.path() / "nope.pem").string(), key, warning);
  ASSERT_TRUE(std::holds_alternative<std::string>(missing));
  EXPECT_NE(std::get<std::string>(missing).find("nope.pem': cannot read it"), std::string::npos)
      << std::get<std::string>(missing);

  auto not_pem = TlsIdentity::load(cert, dir.write("junk.pem", "not a key\n"), warning);
  ASSERT_TRUE(std::holds_alternative<std::string>(not_pem));
  EXPECT_NE(std::get<std::string>(not_pem).find("not a PEM private key"), std::string::npos);

  ::chmod(key.c_str(), 0644);
  auto open = TlsIdentity::load(cert, key, warning);
  EXPECT_TRUE(std::holds_alternative<TlsIdentity>(open));
  EXPECT_NE(warning.find("can be read by other users"), std::string::npos) << warning;
}

TEST(TlsIdentity, TheKeyTravelsToAChildAndBackIntact) {
  const auto one = fresh_identity();
  auto again = TlsIdentity::from_pem(one->cert_pem(), one->key_pem());
  ASSERT_TRUE(std::holds_alternative<TlsIdentity>(again));
  EXPECT_EQ(std::get<TlsIdentity>(again).fingerprint(), one->fingerprint());
  EXPECT_TRUE(std::holds_alternative<std::string>(
      TlsIdentity::from_pem(one->cert_pem(), fresh_identity()->key_pem())));
}

TEST(TlsSetup, KernelTlsRequiredWhereTheKernelHasNoneIsOneSentence) {
  const std::string missing = kernel_tls_missing();
  if (missing.empty()) GTEST_SKIP() << "this kernel has TLS";
  TlsUses uses;
  profile::TlsOptions ktls;
  ktls.ktls = profile::KernelTls::kOn;
  uses.connects.push_back(ktls);
  auto made = TlsSetup::make(uses, nullptr, {});
  ASSERT_EQ(made.index(), 1U);
  EXPECT_NE(std::get<1>(made).find("ktls: this kernel has no TLS"), std::string::npos);
  ktls.ktls = profile::KernelTls::kTry;
  uses.connects = {ktls};
  auto fallback = TlsSetup::make(uses, nullptr, {});
  ASSERT_EQ(fallback.index(), 0U);
  EXPECT_TRUE(std::get<0>(fallback)->kernel_tls_fell_back());
}

}  // namespace
}  // namespace volley::transport
