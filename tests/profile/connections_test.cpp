// connection_sites(): every connect and accept of a profile, where it is and what it opens.
#include "volley/profile/connections.hpp"

#include <gtest/gtest.h>

#include "profile/test_profiles.hpp"

namespace volley::profile {
namespace {

TEST(ConnectionSites, EveryConnectAndAcceptInOrderWithItsPlace) {
  const Profile p = testing::parse_ok(R"XML(<profile name="p">
  <group nthreads="2">
    <transaction iterations="1">
      <flowop type="connect" options="remotehost=a protocol=tcp"/>
      <flowop type="think" options="duration=1ms"/>
      <flowop type="connect" options="remotehost=b protocol=udp port=7000 conn=3"/>
    </transaction>
    <transaction duration="1s">
      <flowop type="write" options="size=64"/>
      <flowop type="write" options="size=64 conn=3"/>
    </transaction>
  </group>
  <group nthreads="1">
    <transaction iterations="1"><flowop type="nop"/></transaction>
    <transaction iterations="1">
      <flowop type="accept" options="remotehost=[::1] protocol=tcp port=7001"/>
      <flowop type="read" options="size=64"/>
    </transaction>
  </group>
</profile>)XML");
  const std::vector<ConnectionSite> expected{
      {0, 0, 0, 0, OnConnection::kDials, Protocol::kTcp, std::nullopt, "a"},
      {0, 0, 2, 3, OnConnection::kDials, Protocol::kUdp, 7000, "b"},
      {1, 1, 0, 0, OnConnection::kAccepts, Protocol::kTcp, 7001, "::1"},
  };
  EXPECT_EQ(connection_sites(p), expected);
}

TEST(ConnectionSites, NoneInAProfileThatOpensNothing) {
  const Profile p = testing::parse_ok(
      "<profile name=\"p\"><group><transaction><flowop type=\"nop\"/></transaction></group>"
      "</profile>");
  EXPECT_TRUE(connection_sites(p).empty());
}

}  // namespace
}  // namespace volley::profile
