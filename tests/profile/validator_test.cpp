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

TEST(Validate, ConnectTwiceOpensAPoolOfTwo) {
  // uperf keeps a pool per connection id: a second connect opens one more, and two disconnects
  // close both.
  const Profile p = one_group({{connect(0, 2), connect(0, 3)},
                               {op("disconnect", DisconnectOp{}, 0, 4)},
                               {op("disconnect", DisconnectOp{}, 0, 5)}});
  EXPECT_TRUE(validate(p).empty()) << validate(p).format(nullptr);
}

Profile iterated(std::vector<std::pair<std::uint64_t, std::vector<Flowop>>> txns) {
  Profile p = one_group({});
  for (auto& [n, flowops] : txns) {
    Transaction t;
    t.bound = Iterations{n};
    t.flowops = std::move(flowops);
    p.groups[0].transactions.push_back(std::move(t));
  }
  return p;
}

TEST(Validate, UperfDisconnectIterIsValid) {
  // uperf's tests/disconnect_iter.xml: ten connects, then ten disconnects.
  const Profile p =
      iterated({{10, {connect(0, 2)}}, {10, {op("disconnect", DisconnectOp{}, 0, 3)}}});
  EXPECT_TRUE(validate(p).empty()) << validate(p).format(nullptr);
}

TEST(Validate, MoreDisconnectsThanConnectsIsAnError) {
  const Profile p = iterated({{3, {connect(0, 2)}}, {5, {op("disconnect", DisconnectOp{}, 0, 3)}}});
  EXPECT_EQ(validate(p).format(nullptr),
            "v.xml:3:1: error: 'disconnect' uses the anonymous connection in iteration 4 of 5, but "
            "none is open then: each iteration closes 1 more than it opens\n");
}

TEST(Validate, DisconnectCountBeyondThePoolIsAnError) {
  Flowop close = op("disconnect", DisconnectOp{}, 0, 3);
  close.common.count = 3;
  const Profile p = iterated({{2, {connect(0, 2)}}, {1, {close}}});
  EXPECT_EQ(validate(p).format(nullptr),
            "v.xml:3:1: error: 'disconnect' closes the anonymous connection 3 times, but at most 2 "
            "are open\n");
}

TEST(Validate, HugeCountsDoNotOverflowThePoolArithmetic) {
  Flowop open = connect(0, 2);
  open.common.count = ~std::uint64_t{0};
  Flowop close = op("disconnect", DisconnectOp{}, 0, 3);
  close.common.count = ~std::uint64_t{0};
  const Profile fine = iterated({{~std::uint64_t{0}, {open}}, {~std::uint64_t{0}, {close}}});
  EXPECT_FALSE(validate(fine).has_errors()) << validate(fine).format(nullptr);
  const Profile drained = iterated(
      {{3, {connect(0, 2)}}, {~std::uint64_t{0}, {op("disconnect", DisconnectOp{}, 0, 3)}}});
  EXPECT_TRUE(validate(drained).has_errors());
}

TEST(Validate, ConnectDisconnectLoopInADurationIsValid) {
  Profile p = one_group({});
  Transaction t;
  t.bound = Duration{std::chrono::seconds(1)};
  t.flowops = {connect(0, 2), op("write", WriteOp{SizeSpec::fixed(1), {}, {}}, 0, 3),
               op("disconnect", DisconnectOp{}, 0, 4)};
  p.groups[0].transactions.push_back(std::move(t));
  EXPECT_TRUE(validate(p).empty()) << validate(p).format(nullptr);
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
  EXPECT_EQ(validate(p).format(nullptr), "v.xml:1:1: error: 'nthreads' must be at least 1\n")
      << "iterations=0 is a skipped transaction (a warning from the parser)";
  p.groups[0].transactions[0].bound = Duration{};
  EXPECT_EQ(validate(p).error_count(), 2U);
}

}  // namespace
}  // namespace volley::profile
