#include "volley/profile/validator.hpp"

#include <gtest/gtest.h>

#include "profile/test_profiles.hpp"

namespace volley::profile {
namespace {

Flowop op(std::string type, FlowopSpec spec, std::uint32_t conn, std::uint32_t line) {
  Flowop f{std::move(type), std::move(spec), {}, SourceLocation{"v.xml", line, 1}};
  f.common.connection = conn;
  return f;
}

Flowop connect(std::uint32_t conn, std::uint32_t line) {
  ConnectionOptions options;
  options.remotehost = "h";
  return op("connect", ConnectOp{options}, conn, line);
}

Profile one_group(std::vector<std::vector<Flowop>> txns) {
  Profile p;
  Group g;
  g.location = {"v.xml", 1, 1};
  for (auto& flowops : txns) {
    Transaction t;
    t.flowops = std::move(flowops);
    g.transactions.push_back(std::move(t));
  }
  p.groups.push_back(std::move(g));
  return p;
}

TEST(Validate, ConnectInEarlierTransactionOpensTheConnection) {
  const Profile p = one_group({{connect(0, 2)},
                               {op("write", WriteOp{SizeSpec::fixed(1), {}, {}}, 0, 3),
                                op("read", ReadOp{SizeSpec::fixed(1), {}, {}}, 0, 4)},
                               {op("disconnect", DisconnectOp{}, 0, 5)}});
  EXPECT_TRUE(validate(p).empty()) << validate(p).format(nullptr);
}

TEST(Validate, ReadWithoutConnect) {
  const Profile p = one_group({{op("read", ReadOp{SizeSpec::fixed(1), {}, {}}, 0, 2)}});
  EXPECT_EQ(validate(p).format(nullptr),
            "v.xml:2:1: error: 'read' uses the anonymous connection, but no earlier flowop in this "
            "group opens it\n");
}

TEST(Validate, NamedConnectionsAreSeparate) {
  const Profile p =
      one_group({{connect(1, 2), op("write", WriteOp{SizeSpec::fixed(1), {}, {}}, 1, 3),
                  op("sendfilev", SendfilevOp{}, 2, 4)}});
  EXPECT_EQ(validate(p).format(nullptr),
            "v.xml:4:1: error: 'sendfilev' uses connection 2, but no earlier flowop in this group "
            "opens it\n"
            "v.xml:2:1: note: connection 1 is opened here; add conn=1 to use it\n");
}

TEST(Validate, UseAfterDisconnectPointsAtTheDisconnect) {
  const Profile p = one_group({{connect(0, 2), op("disconnect", DisconnectOp{}, 0, 3)},
                               {op("write", WriteOp{SizeSpec::fixed(1), {}, {}}, 0, 4)}});
  EXPECT_EQ(validate(p).format(nullptr),
            "v.xml:4:1: error: 'write' uses the anonymous connection, but no earlier flowop in "
            "this group opens it\n"
            "v.xml:3:1: note: the anonymous connection is closed here\n");
}

TEST(Validate, ConnectTwiceIsAWarning) {
  const Profile p = one_group({{connect(0, 2), connect(0, 3)}});
  const auto d = validate(p);
  EXPECT_FALSE(d.has_errors());
  EXPECT_EQ(d.format(nullptr),
            "v.xml:3:1: warning: 'connect' opens the anonymous connection again, but it is "
            "already open\n"
            "v.xml:2:1: note: it is opened here\n");
}

TEST(Validate, ThinkAndNopNeedNoConnection) {
  const Profile p = one_group(
      {{op("think", ThinkOp{std::chrono::milliseconds(1)}, 0, 2), op("nop", NopOp{}, 0, 3)}});
  EXPECT_TRUE(validate(p).empty());
}

TEST(Validate, AcceptOpensToo) {
  const Profile p = one_group({{op("accept", AcceptOp{}, 0, 2), op("recv", ReadOp{}, 0, 3)}});
  EXPECT_TRUE(validate(p).empty());
}

TEST(Validate, GroupsAreIndependent) {
  Profile p = one_group({{connect(0, 2)}});
  Profile other = one_group({{op("read", ReadOp{}, 0, 9)}});
  p.groups.push_back(other.groups[0]);
  EXPECT_EQ(validate(p).error_count(), 1U);
}

TEST(Validate, BoundsAndThreadCounts) {
  Profile p = one_group({{op("nop", NopOp{}, 0, 2)}});
  p.groups[0].nthreads = 0;
  p.groups[0].transactions[0].bound = Iterations{0};
  p.groups[0].transactions[0].location = {"v.xml", 5, 3};
  EXPECT_EQ(validate(p).format(nullptr),
            "v.xml:1:1: error: 'nthreads' must be at least 1\n")
      << "iterations=0 is a skipped transaction (a warning from the parser)";
  p.groups[0].transactions[0].bound = Duration{};
  EXPECT_EQ(validate(p).error_count(), 2U);
}

}  // namespace
}  // namespace volley::profile
