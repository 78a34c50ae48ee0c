// zerocopy on write and send: read into the model, printed back, dropped by the mirror (the
// slave reads), and every misuse a located error or warning.
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

/// A connect with `connect_options` on line 2, then `flowop` alone on line 3, in a 1 s step.
std::string zerocopy_profile(const std::string& connect_options, const std::string& flowop) {
  return "<profile name=\"p\"><group nthreads=\"1\"><transaction iterations=\"1\">\n"
         "<flowop type=\"connect\" options=\"" +
         connect_options + "\"/></transaction><transaction duration=\"1s\">\n" + flowop +
         "</transaction></group></profile>";
}

const WriteOp& timed_write(const Profile& p) {
  return std::get<WriteOp>(p.groups.at(0).transactions.at(1).flowops.at(0).spec);
}

TEST(ZeroCopyOption, WriteAndSendTakeIt) {
  for (const char* type : {"write", "send"}) {
    const Profile p = parse_ok(zerocopy_profile(
        "remotehost=h protocol=tcp",
        std::string("<flowop type=\"") + type + "\" options=\"size=64k zerocopy\"/>"));
    EXPECT_TRUE(timed_write(p).zerocopy) << type;
  }
  const Profile plain = parse_ok(zerocopy_profile("remotehost=h protocol=tcp",
                                                  "<flowop type=\"write\" options=\"size=64k\"/>"));
  EXPECT_FALSE(timed_write(plain).zerocopy);
}

TEST(ZeroCopyOption, PrintedAndNotMirrored) {
  const Profile p = parse_ok(zerocopy_profile(
      "remotehost=h protocol=tcp", "<flowop type=\"write\" options=\"size=1m zerocopy\"/>"));
  const std::string text = to_text(p);
  EXPECT_NE(text.find(" zerocopy"), std::string::npos) << text;
  const Profile slave = mirror(p, "");
  const auto& read = slave.groups.at(0).transactions.at(1).flowops.at(0);
  EXPECT_TRUE(std::holds_alternative<ReadOp>(read.spec)) << "the slave reads what the master sends";
  EXPECT_EQ(to_text(slave).find("zerocopy"), std::string::npos) << to_text(slave);
}

TEST(ZeroCopyOption, OnAReadIsAnErrorAtTheOption) {
  for (const char* type : {"read", "recv"}) {
    const std::string text = diagnostics_of(zerocopy_profile(
        "remotehost=h protocol=tcp",
        std::string("<flowop type=\"") + type + "\" options=\"size=64k zerocopy\"/>"));
    // Line 3, the column of the option's name inside the attribute.
    const std::string at =
        std::string("test.xml:3:") +
        std::to_string(std::string("<flowop type=\"\" options=\"size=64k ").size() +
                       std::string(type).size() + 1) +
        ": error: option 'zerocopy' applies to write and send only, not to '" + type + "'";
    EXPECT_NE(text.find(at), std::string::npos) << text;
  }
}

TEST(ZeroCopyOption, OnAProtocolThatCannotIsAnErrorAtTheFlowop) {
  const std::string write = "<flowop type=\"write\" options=\"size=64k zerocopy\"/>";
  const std::string udp = diagnostics_of(zerocopy_profile("remotehost=h protocol=udp", write));
  EXPECT_NE(udp.find("test.xml:3:1: error: 'write' with zerocopy needs a TCP connection: the "
                     "anonymous connection is udp"),
            std::string::npos)
      << udp;
  EXPECT_NE(udp.find("test.xml:2:1: note: the anonymous connection is opened here"),
            std::string::npos)
      << udp;
  const std::string tls = diagnostics_of(zerocopy_profile("remotehost=h protocol=tls", write));
  EXPECT_NE(tls.find("test.xml:3:1: error: 'write' with zerocopy needs a TCP connection: the "
                     "anonymous connection is tls"),
            std::string::npos)
      << tls;
  EXPECT_EQ(diagnostics_of(zerocopy_profile("remotehost=h protocol=tcp", write)), "");
}

TEST(ZeroCopyOption, SmallWritesAreAWarning) {
  const std::string text = diagnostics_of(zerocopy_profile(
      "remotehost=h protocol=tcp", "<flowop type=\"write\" options=\"size=4k zerocopy\"/>"));
  const std::string at =
      "test.xml:3:" +
      std::to_string(std::string("<flowop type=\"write\" options=\"size=4k ").size() + 1) +
      ": warning: option 'zerocopy': writes of at most 4096 bytes seldom gain from it";
  EXPECT_NE(text.find(at), std::string::npos) << text;
  EXPECT_EQ(text.find("error:"), std::string::npos) << text;
  EXPECT_EQ(diagnostics_of(zerocopy_profile(
                "remotehost=h protocol=tcp",
                "<flowop type=\"write\" options=\"size=rand(1k,16k) zerocopy\"/>")),
            "")
      << "some writes are large enough";
}

TEST(ZeroCopyOption, IsAFlag) {
  const std::string text = diagnostics_of(zerocopy_profile(
      "remotehost=h protocol=tcp", "<flowop type=\"write\" options=\"size=64k zerocopy=yes\"/>"));
  EXPECT_NE(text.find("option 'zerocopy' is a flag and takes no value"), std::string::npos) << text;
}

}  // namespace
}  // namespace volley::profile
