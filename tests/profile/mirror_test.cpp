#include "volley/profile/mirror.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include "profile/test_profiles.hpp"

namespace volley::profile {
namespace {

using namespace std::chrono_literals;
using testing::parse_ok;

const std::vector<Flowop>& ops(const Profile& p, std::size_t group, std::size_t txn) {
  return p.groups.at(group).transactions.at(txn).flowops;
}

TEST(Mirror, ConnectBecomesAcceptWithTheSameOptions) {
  const Profile m = parse_ok(
      "<profile><group><transaction><flowop type=\"connect\" options=\"remotehost=$h "
      "protocol=tcp port=7000 wndsz=64k tcp_nodelay cc=cubic conn=2 canfail timeout=1s\"/>"
      "<flowop type=\"accept\" options=\"remotehost=$h protocol=tcp\"/>"
      "</transaction></group></profile>");
  const Profile s = mirror(m, "");
  const Flowop& accept = ops(s, 0, 0).at(0);
  EXPECT_EQ(accept.type, "accept");
  EXPECT_EQ(std::get<AcceptOp>(accept.spec).connection,
            std::get<ConnectOp>(ops(m, 0, 0)[0].spec).connection);
  EXPECT_EQ(accept.common, ops(m, 0, 0)[0].common) << "conn, canfail, timeout are kept";
  EXPECT_EQ(accept.location, ops(m, 0, 0)[0].location);
  EXPECT_EQ(ops(s, 0, 0).at(1).type, "connect");
  EXPECT_TRUE(std::holds_alternative<ConnectOp>(ops(s, 0, 0).at(1).spec));
}

TEST(Mirror, WriteAndReadSwapAndRsizeBecomesChunk) {
  const Profile m = parse_ok(
      testing::with_body("<flowop type=\"write\" options=\"size=rand(64,128) rsize=32 count=3\"/>"
                         "<flowop type=\"read\" options=\"size=4k rsize=1k\"/>"
                         "<flowop type=\"send\" options=\"size=10\"/>"
                         "<flowop type=\"recv\" options=\"size=20\"/>"));
  const Profile s = mirror(m, "");
  const auto& body = ops(s, 0, 1);
  ASSERT_EQ(body.size(), 4U);
  EXPECT_EQ(body[0].type, "read");
  EXPECT_EQ(std::get<ReadOp>(body[0].spec), (ReadOp{SizeSpec{64, 128}, std::nullopt, 32U}));
  EXPECT_EQ(body[0].common.count, 3U);
  EXPECT_EQ(body[1].type, "write");
  EXPECT_EQ(std::get<WriteOp>(body[1].spec), (WriteOp{SizeSpec::fixed(4096), std::nullopt, 1024U}));
  EXPECT_EQ(body[2].type, "recv");
  EXPECT_EQ(std::get<ReadOp>(body[2].spec).size, SizeSpec::fixed(10));
  EXPECT_FALSE(std::get<ReadOp>(body[2].spec).chunk_bytes);
  EXPECT_EQ(body[3].type, "send");
  EXPECT_EQ(std::get<WriteOp>(body[3].spec).size, SizeSpec::fixed(20));
}

TEST(Mirror, SendfileBecomesRecvFile) {
  const Profile m =
      parse_ok(testing::with_body("<flowop type=\"sendfile\" options=\"file=/a size=8k\"/>"
                                  "<flowop type=\"sendfilev\" options=\"dir=/d nfiles=4\"/>"));
  const Profile s = mirror(m, "");
  EXPECT_EQ(ops(s, 0, 1).at(0).type, "recvfile");
  EXPECT_EQ(std::get<RecvFileOp>(ops(s, 0, 1)[0].spec), (RecvFileOp{FileSource{"/a", false}, 1}));
  EXPECT_EQ(std::get<RecvFileOp>(ops(s, 0, 1)[1].spec), (RecvFileOp{FileSource{"/d", true}, 4}));
}

TEST(Mirror, DisconnectThinkNopUnchangedAndStructureKept) {
  const Profile m = parse_ok(
      "<profile name=\"n\"><group name=\"g\" nthreads=\"5\"><transaction iterations=\"1\">"
      "<flowop type=\"connect\" options=\"remotehost=$h protocol=tcp\"/></transaction>"
      "<transaction name=\"body\" duration=\"3s\" rate=\"100\">"
      "<flowop type=\"think\" options=\"duration=1ms busy\"/><flowop type=\"nop\"/>"
      "</transaction><transaction><flowop type=\"disconnect\"/></transaction>"
      "</group></profile>");
  const Profile s = mirror(m, "");
  EXPECT_EQ(s.name, "n");
  ASSERT_EQ(s.groups.size(), 1U);
  EXPECT_EQ(s.groups[0].name, "g");
  EXPECT_EQ(s.groups[0].nthreads, 5U);
  ASSERT_EQ(s.groups[0].transactions.size(), 3U);
  const Transaction& body = s.groups[0].transactions[1];
  EXPECT_EQ(body.name, "body");
  EXPECT_EQ(std::get<Duration>(body.bound).length, 3s);
  EXPECT_FALSE(body.rate_per_s) << "the slave follows the master's pace; it is not paced itself";
  EXPECT_EQ(std::get<ThinkOp>(body.flowops.at(0).spec), (ThinkOp{1ms, true}));
  EXPECT_TRUE(std::holds_alternative<NopOp>(body.flowops.at(1).spec));
  EXPECT_TRUE(std::holds_alternative<DisconnectOp>(ops(s, 0, 2).at(0).spec));
}

TEST(Mirror, MirrorTwiceRestoresTheOperations) {
  const Profile m = parse_ok(testing::with_body(
      "<flowop type=\"write\" options=\"size=64\"/><flowop type=\"read\" options=\"size=64\"/>"));
  const Profile back = mirror(mirror(m, ""), "");
  EXPECT_EQ(back.groups, m.groups);
}

constexpr const char* kTwoHosts = R"(<profile>
  <group nthreads="2" name="both">
    <transaction>
      <flowop type="connect" options="remotehost=a protocol=tcp"/>
      <flowop type="connect" options="conn=1 remotehost=b protocol=tcp"/>
    </transaction>
    <transaction duration="1s">
      <flowop type="write" options="size=1"/>
      <flowop type="write" options="conn=1 size=2"/>
      <flowop type="think" options="duration=1ms"/>
      <flowop type="read" options="conn=1 size=3"/>
    </transaction>
    <transaction>
      <flowop type="disconnect"/>
      <flowop type="disconnect" options="conn=1"/>
    </transaction>
  </group>
  <group nthreads="3" name="only-b">
    <transaction>
      <flowop type="connect" options="remotehost=b protocol=tcp"/>
      <flowop type="read" options="size=4"/>
    </transaction>
  </group>
</profile>)";

TEST(Mirror, KeepsOnlyTheFlowopsOfTheGivenHost) {
  const Profile m = parse_ok(kTwoHosts);
  const Profile a = mirror(m, "a");
  ASSERT_EQ(a.groups.size(), 2U) << "groups keep their place";
  EXPECT_EQ(a.groups[0].nthreads, 2U);
  ASSERT_EQ(ops(a, 0, 0).size(), 1U);
  EXPECT_EQ(std::get<AcceptOp>(ops(a, 0, 0)[0].spec).connection.remotehost, "a");
  ASSERT_EQ(ops(a, 0, 1).size(), 2U);
  EXPECT_EQ(std::get<ReadOp>(ops(a, 0, 1)[0].spec).size, SizeSpec::fixed(1));
  EXPECT_TRUE(std::holds_alternative<ThinkOp>(ops(a, 0, 1)[1].spec)) << "think is kept";
  ASSERT_EQ(ops(a, 0, 2).size(), 1U);
  EXPECT_EQ(ops(a, 0, 2)[0].common.connection, 0U);
  EXPECT_EQ(a.groups[1].nthreads, 0U) << "group 2 only talks to b";
  ASSERT_EQ(a.groups[1].transactions.size(), 1U) << "transactions keep their place";
  EXPECT_TRUE(ops(a, 1, 0).empty());

  const Profile b = mirror(m, "b");
  ASSERT_EQ(ops(b, 0, 1).size(), 3U);
  EXPECT_EQ(std::get<ReadOp>(ops(b, 0, 1)[0].spec).size, SizeSpec::fixed(2));
  EXPECT_EQ(std::get<WriteOp>(ops(b, 0, 1)[2].spec).size, SizeSpec::fixed(3));
  EXPECT_EQ(ops(b, 0, 2).size(), 1U);
  EXPECT_EQ(ops(b, 0, 2)[0].common.connection, 1U);
  EXPECT_EQ(b.groups[1].nthreads, 3U);
  EXPECT_EQ(ops(b, 1, 0).size(), 2U);

  const Profile none = mirror(m, "c");
  EXPECT_EQ(none.groups[0].nthreads, 0U);
  EXPECT_EQ(none.groups[1].nthreads, 0U);

  const Profile all = mirror(m, "");
  EXPECT_EQ(ops(all, 0, 1).size(), 4U);
  EXPECT_EQ(all.groups[1].nthreads, 3U);
}

TEST(Mirror, ReconnectToAnotherHostMovesTheConnection) {
  const Profile m = parse_ok(
      "<profile><group><transaction>"
      "<flowop type=\"connect\" options=\"remotehost=a protocol=tcp\"/>"
      "<flowop type=\"write\" options=\"size=1\"/><flowop type=\"disconnect\"/>"
      "<flowop type=\"connect\" options=\"remotehost=b protocol=tcp\"/>"
      "<flowop type=\"write\" options=\"size=2\"/>"
      "</transaction></group></profile>");
  const Profile mirrored_a = mirror(m, "a");
  const auto& a = ops(mirrored_a, 0, 0);
  ASSERT_EQ(a.size(), 3U);
  EXPECT_EQ(a[2].type, "disconnect");
  const Profile b = mirror(m, "b");
  ASSERT_EQ(ops(b, 0, 0).size(), 2U);
  EXPECT_EQ(std::get<ReadOp>(ops(b, 0, 0)[1].spec).size, SizeSpec::fixed(2));
}

}  // namespace
}  // namespace volley::profile
