#include "volley/profile/printer.hpp"

#include <gtest/gtest.h>

#include "profile/test_profiles.hpp"
#include "volley/profile/mirror.hpp"

namespace volley::profile {
namespace {

TEST(Printer, EveryLevelWithResolvedOptions) {
  const Profile p = testing::parse_ok(R"(<profile name="demo">
  <group nthreads="$t" name="clients">
    <transaction iterations="1">
      <flowop type="connect" options="remotehost=$h protocol=tcp port=5000 wndsz=50k tcp_nodelay cc=cubic"/>
    </transaction>
    <transaction duration="90s" rate="100" name="body">
      <flowop type="write" options="size=rand(64,8k) count=2 canfail"/>
      <flowop type="read" options="size=64k rsize=1k timeout=1500ms"/>
      <flowop type="sendfilev" options="dir=/srv nfiles=2 size=1m"/>
      <flowop type="think" options="duration=120s busy"/>
      <flowop type="nop"/>
    </transaction>
  </group>
</profile>)");
  EXPECT_EQ(to_text(p),
            "profile \"demo\" (test.xml)\n"
            "  group 1 \"clients\": nthreads=2\n"
            "    transaction 1: iterations=1\n"
            "      connect remotehost=127.0.0.1 protocol=tcp port=5000 wndsz=51200 (50k) "
            "tcp_nodelay cc=cubic\n"
            "    transaction 2 \"body\": duration=90s rate=100/s\n"
            "      write size=rand(64, 8192 (8k)) count=2 canfail\n"
            "      read size=65536 (64k) rsize=1024 (1k) timeout=1500ms\n"
            "      sendfilev dir=/srv nfiles=2 size=1048576 (1m)\n"
            "      think duration=120s busy\n"
            "      nop\n");
}

TEST(Printer, MirroredOps) {
  const Profile p =
      testing::parse_ok(testing::with_body("<flowop type=\"write\" options=\"size=8 rsize=4\"/>"
                                           "<flowop type=\"sendfile\" options=\"file=/f\"/>"));
  const std::string text = to_text(mirror(p, ""));
  EXPECT_NE(text.find("      accept remotehost=127.0.0.1 protocol=tcp\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("      read size=8 chunk=4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("      recvfile file=/f nfiles=1\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace volley::profile
