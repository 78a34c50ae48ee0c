// protocol=tls (and uperf's ssl) and its options: read into the model, printed back, mirrored, and
// every bad value a located error.
#include <gtest/gtest.h>

#include <string>

#include "profile/test_profiles.hpp"
#include "volley/profile/mirror.hpp"
#include "volley/profile/parser.hpp"
#include "volley/profile/printer.hpp"

namespace volley::profile {
namespace {

using testing::diagnostics_of;
using testing::parse_ok;

/// One connect with `options`, on line 2, then a 1 s write and read.
std::string connect_with(const std::string& options, const std::string& body = "") {
  return "<profile name=\"p\"><group nthreads=\"1\"><transaction iterations=\"1\">\n"
         "<flowop type=\"connect\" options=\"" +
         options + "\"/></transaction><transaction duration=\"1s\">" +
         (body.empty() ? "<flowop type=\"write\" options=\"size=64\"/>" : body) +
         "</transaction></group></profile>";
}

const ConnectionOptions& first_connect(const Profile& p) {
  return std::get<ConnectOp>(p.groups.at(0).transactions.at(0).flowops.at(0).spec).connection;
}

TEST(TlsOptions, SslIsUperfsNameForTls) {
  for (const char* name : {"tls", "ssl", "SSL", "Tls"}) {
    const Profile p = parse_ok(connect_with(std::string("remotehost=h protocol=") + name));
    EXPECT_EQ(first_connect(p).protocol, Protocol::kTls) << name;
    EXPECT_EQ(first_connect(p).tls, TlsOptions{}) << "defaults: 1.3, OpenSSL's ciphers, full";
  }
}

TEST(TlsOptions, EveryOptionIsRead) {
  const Profile p =
      parse_ok(connect_with("remotehost=h protocol=tls tls_version=1.2 "
                            "cipher=ECDHE-ECDSA-AES128-GCM-SHA256 resume ktls=try"));
  const TlsOptions& t = first_connect(p).tls;
  EXPECT_EQ(t.version, TlsVersion::k12);
  EXPECT_EQ(t.cipher, "ECDHE-ECDSA-AES128-GCM-SHA256");
  EXPECT_TRUE(t.resume);
  EXPECT_EQ(t.ktls, KernelTls::kTry);
  EXPECT_EQ(first_connect(parse_ok(connect_with("remotehost=h protocol=tls ktls"))).tls.ktls,
            KernelTls::kOn);
  EXPECT_EQ(first_connect(parse_ok(connect_with("remotehost=h protocol=tls "
                                                "cipher=TLS_CHACHA20_POLY1305_SHA256")))
                .tls.cipher,
            "TLS_CHACHA20_POLY1305_SHA256");
}

TEST(TlsOptions, BadValuesAreLocatedErrors) {
  const auto expect_error = [](const std::string& options, const std::string& says) {
    const std::string text = diagnostics_of(connect_with(options));
    EXPECT_NE(text.find("test.xml:2:"), std::string::npos) << text;
    EXPECT_NE(text.find("error:"), std::string::npos) << text;
    EXPECT_NE(text.find(says), std::string::npos) << options << " -> " << text;
  };
  expect_error("remotehost=h protocol=tls tls_version=1.1", "not a TLS version volley offers");
  expect_error("remotehost=h protocol=tls cipher=TLS_AES_129_GCM_SHA256",
               "not a TLS 1.3 suite OpenSSL knows");
  expect_error("remotehost=h protocol=tls cipher=ECDHE-ECDSA-AES128-GCM-SHA256",
               "for a TLS 1.2 cipher add tls_version=1.2");
  expect_error("remotehost=h protocol=tls cipher=TLS_AES_128_GCM_SHA256:NOPE",
               "not a TLS 1.3 suite");
  expect_error("remotehost=h protocol=tls tls_version=1.2 cipher=NO-SUCH-CIPHER",
               "selects no TLS 1.2 cipher");
  expect_error("remotehost=h protocol=tls ktls=sometimes", "is not on, try or off");
  expect_error("remotehost=h protocol=tcp resume", "option 'resume' needs protocol=tls");
  expect_error("remotehost=h protocol=udp cipher=TLS_AES_128_GCM_SHA256",
               "option 'cipher' needs protocol=tls (or ssl): this connection is udp");
  expect_error("remotehost=h protocol=tls resume=yes", "is a flag and takes no value");
}

TEST(TlsOptions, UperfsEngineIsAWarning) {
  const std::string text = diagnostics_of(connect_with("remotehost=h protocol=ssl engine=rdrand"));
  EXPECT_NE(text.find("test.xml:2:"), std::string::npos) << text;
  EXPECT_NE(text.find("warning: option 'engine=rdrand' is ignored"), std::string::npos) << text;
  EXPECT_EQ(text.find("error:"), std::string::npos) << text;
}

TEST(TlsOptions, SendfileOnTlsNeedsTheKernelsTls) {
  const std::string sendfile = "<flowop type=\"sendfile\" options=\"file=/etc/hostname\"/>";
  const std::string refused = diagnostics_of(connect_with("remotehost=h protocol=tls", sendfile));
  EXPECT_NE(refused.find("error: 'sendfile' on a TLS connection needs the kernel's TLS"),
            std::string::npos)
      << refused;
  EXPECT_NE(refused.find("test.xml:2:1: note: the anonymous connection is opened here"),
            std::string::npos)
      << refused;
  EXPECT_NE(diagnostics_of(connect_with("remotehost=h protocol=tls ktls=try", sendfile))
                .find("error: 'sendfile' on a TLS connection"),
            std::string::npos)
      << "ktls=try may fall back: sendfile would then send the file in the clear";
  EXPECT_EQ(diagnostics_of(connect_with("remotehost=h protocol=tls ktls", sendfile)), "");
  EXPECT_EQ(diagnostics_of(connect_with("remotehost=h protocol=tcp", sendfile)), "");
}

TEST(TlsOptions, PrintedAndMirrored) {
  const Profile p =
      parse_ok(connect_with("remotehost=h protocol=ssl tls_version=1.2 "
                            "cipher=ECDHE-ECDSA-CHACHA20-POLY1305 resume ktls=try"));
  const std::string text = to_text(p);
  EXPECT_NE(text.find("protocol=tls tls_version=1.2 cipher=ECDHE-ECDSA-CHACHA20-POLY1305 resume "
                      "ktls=try"),
            std::string::npos)
      << text;
  const Profile slave = mirror(p, "");
  const auto& accept =
      std::get<AcceptOp>(slave.groups.at(0).transactions.at(0).flowops.at(0).spec).connection;
  EXPECT_EQ(accept.protocol, Protocol::kTls);
  EXPECT_EQ(accept.tls, first_connect(p).tls) << "the slave's accept offers what the connect asks";
}

}  // namespace
}  // namespace volley::profile
