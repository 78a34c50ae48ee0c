// `gso` on a UDP connect or accept: read into the model, printed back, mirrored to the slave's
// accept, and every profile that cannot do what it asks a located error: gso on a connection that
// is not UDP, and datagrams on a gso connection that the kernel cannot cut out of one
// super-buffer (sizes that differ, or a size of which two do not fit in one).
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

/// One connect with `options`, on line 2, then `body` (a write of 1472 bytes) on line 3.
std::string gso_connect(const std::string& options,
                        const std::string& body = R"(<flowop type="write" options="size=1472"/>)") {
  return "<profile name=\"p\"><group nthreads=\"1\"><transaction iterations=\"1\">\n"
         "<flowop type=\"connect\" options=\"" +
         options + "\"/></transaction>\n<transaction duration=\"1s\">" + body +
         "</transaction></group></profile>";
}

const ConnectionOptions& connect_options(const Profile& p) {
  return std::get<ConnectOp>(p.groups.at(0).transactions.at(0).flowops.at(0).spec).connection;
}

TEST(GsoOption, IsReadPrintedAndMirroredToTheSlavesAccept) {
  const Profile p = parse_ok(gso_connect("remotehost=h protocol=udp gso"));
  EXPECT_TRUE(connect_options(p).gso);
  EXPECT_FALSE(connect_options(parse_ok(gso_connect("remotehost=h protocol=udp"))).gso);
  const std::string text = to_text(p);
  EXPECT_NE(text.find("protocol=udp gso"), std::string::npos) << text;
  const Profile slave = mirror(p, "");
  const auto& accept =
      std::get<AcceptOp>(slave.groups.at(0).transactions.at(0).flowops.at(0).spec).connection;
  EXPECT_TRUE(accept.gso) << "the slave's socket must take the super-buffers whole (UDP_GRO)";
}

TEST(GsoOption, OnAConnectionThatIsNotUdpIsALocatedError) {
  for (const char* protocol : {"tcp", "tls"}) {
    const std::string text =
        diagnostics_of(gso_connect(std::string("remotehost=h protocol=") + protocol + " gso"));
    EXPECT_NE(text.find("test.xml:2:"), std::string::npos) << text;
    EXPECT_NE(text.find(std::string("error: option 'gso' needs protocol=udp: this connection is ") +
                        protocol),
              std::string::npos)
        << text;
  }
  EXPECT_NE(diagnostics_of(gso_connect("remotehost=h protocol=udp gso=on"))
                .find("error: option 'gso' is a flag and takes no value"),
            std::string::npos);
}

TEST(GsoOption, DatagramsOfRandomSizesCannotBeSegmented) {
  for (const char* type : {"write", "read"}) {
    const std::string text = diagnostics_of(
        gso_connect("remotehost=h protocol=udp gso",
                    std::string("<flowop type=\"") + type + "\" options=\"size=rand(64,1472)\"/>"));
    EXPECT_NE(text.find("test.xml:3:"), std::string::npos) << text;
    EXPECT_NE(text.find(std::string("error: '") + type +
                        "' of size=rand(...) on a gso connection: the kernel cuts a super-buffer "
                        "into datagrams of one size"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("test.xml:2:1: note: the anonymous connection is opened here"),
              std::string::npos)
        << text;
  }
}

TEST(GsoOption, ADatagramOfWhichTwoDoNotFitOneSuperBufferCannotBeSegmented) {
  const auto body = [](const std::string& size) {
    return "<flowop type=\"write\" options=\"size=" + size + "\"/>";
  };
  const std::string text =
      diagnostics_of(gso_connect("remotehost=h protocol=udp gso", body("32754")));
  EXPECT_NE(text.find("test.xml:3:"), std::string::npos) << text;
  EXPECT_NE(text.find("error: 'write' of 32754-byte datagrams on a gso connection: two do not fit "
                      "in one super-buffer of at most 65507 bytes (gso takes datagrams of at most "
                      "32753 bytes)"),
            std::string::npos)
      << text;
  EXPECT_EQ(diagnostics_of(gso_connect("remotehost=h protocol=udp gso", body("32753"))), "");
  EXPECT_EQ(diagnostics_of(gso_connect("remotehost=h protocol=udp", body("32754"))), "")
      << "without gso a datagram may be as large as UDP allows";
}

TEST(GsoOption, ADatagramFlowopOnAnotherConnectionIsNotChecked) {
  const std::string body = R"(<flowop type="connect" options="remotehost=h protocol=udp conn=2"/>)"
                           R"(<flowop type="write" options="size=rand(64,1472) conn=2"/>)"
                           R"(<flowop type="disconnect" options="conn=2"/>)";
  EXPECT_EQ(diagnostics_of(gso_connect("remotehost=h protocol=udp gso", body)), "");
}

}  // namespace
}  // namespace volley::profile
