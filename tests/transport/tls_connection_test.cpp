// TLS connections over a real loopback TCP pair: a pinned certificate is trusted and carries
// bytes; another certificate, or a peer that does not speak TLS, fails the handshake with
// OpenSSL's reason; the identity files are checked as the control key is.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <variant>

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
