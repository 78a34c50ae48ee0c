#include "volley/profile/parser.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include "profile/test_profiles.hpp"

namespace volley::profile {
namespace {

using namespace std::chrono_literals;
using testing::diagnostics_of;
using testing::parse_ok;
using testing::with_body;

constexpr const char* kPingPong = R"(<?xml version="1.0"?>
<profile name="TCP PingPong">
  <group nthreads="$t">
    <transaction iterations="1">
      <flowop type="connect" options="remotehost=$h protocol=tcp"/>
    </transaction>
    <transaction duration="30s">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
    <transaction iterations="1">
      <flowop type="disconnect"/>
    </transaction>
  </group>
</profile>
)";

TEST(Parser, PingPongModel) {
  const ParseResult r = parse_profile(kPingPong, "pp.xml", testing::default_variables());
  ASSERT_TRUE(r.profile) << r.diagnostics.format(nullptr);
  EXPECT_TRUE(r.diagnostics.empty());
  const Profile& p = *r.profile;
  EXPECT_EQ(p.name, "TCP PingPong");
  EXPECT_EQ(p.file, "pp.xml");
  EXPECT_EQ(p.location, (SourceLocation{"pp.xml", 2, 1}));
  ASSERT_EQ(p.groups.size(), 1U);
  const Group& g = p.groups[0];
  EXPECT_EQ(g.nthreads, 2U);
  EXPECT_FALSE(g.from_nprocs);
  EXPECT_EQ(g.location, (SourceLocation{"pp.xml", 3, 3}));
  ASSERT_EQ(g.transactions.size(), 3U);
  EXPECT_EQ(std::get<Iterations>(g.transactions[0].bound).count, 1U);
  EXPECT_EQ(std::get<Duration>(g.transactions[1].bound).length, 30s);
  EXPECT_EQ(g.transactions[1].location, (SourceLocation{"pp.xml", 7, 5}));
  const Flowop& connect = g.transactions[0].flowops.at(0);
  EXPECT_EQ(connect.type, "connect");
  EXPECT_EQ(connect.location, (SourceLocation{"pp.xml", 5, 7}));
  const auto& c = std::get<ConnectOp>(connect.spec).connection;
  EXPECT_EQ(c.remotehost, "127.0.0.1");
  EXPECT_EQ(c.protocol, Protocol::kTcp);
  EXPECT_FALSE(c.port);
  const Flowop& write = g.transactions[1].flowops.at(0);
  EXPECT_EQ(std::get<WriteOp>(write.spec).size, SizeSpec::fixed(64));
  EXPECT_EQ(write.common, FlowopCommon{});
  EXPECT_EQ(std::get<ReadOp>(g.transactions[1].flowops.at(1).spec).size, SizeSpec::fixed(64));
  EXPECT_TRUE(std::holds_alternative<DisconnectOp>(g.transactions[2].flowops.at(0).spec));
  EXPECT_EQ(r.used_variables, (std::map<std::string, std::string>{{"h", "127.0.0.1"}, {"t", "2"}}));
}

TEST(Parser, DefaultsWhenBoundsAndThreadsAreMissing) {
  const Profile p = parse_ok(
      "<profile><group><transaction><flowop type=\"nop\"/></transaction>"
      "</group></profile>");
  ASSERT_EQ(p.groups.size(), 1U);
  EXPECT_EQ(p.groups[0].nthreads, 1U);
  EXPECT_EQ(p.name, "");
  const Transaction& t = p.groups[0].transactions.at(0);
  EXPECT_EQ(std::get<Iterations>(t.bound).count, 1U) << "uperf: iterations defaults to 1";
  EXPECT_FALSE(t.rate_per_s);
}

TEST(Parser, GroupAndTransactionAttributes) {
  const Profile p = parse_ok(
      "<profile><group nprocs=\"3\" name=\"g\"><transaction name=\"t\" iterations=\"1k\" "
      "rate=\"1.5k\"><flowop type=\"think\" options=\"duration=1ms\"/></transaction>"
      "</group></profile>");
  const Group& g = p.groups.at(0);
  EXPECT_EQ(g.nthreads, 3U);
  EXPECT_TRUE(g.from_nprocs);
  EXPECT_EQ(g.name, "g");
  const Transaction& t = g.transactions.at(0);
  EXPECT_EQ(t.name, "t");
  EXPECT_EQ(std::get<Iterations>(t.bound).count, 1024U);
  ASSERT_TRUE(t.rate_per_s);
  EXPECT_DOUBLE_EQ(*t.rate_per_s, 1536.0);
}

TEST(Parser, ConnectionOptions) {
  const Profile p = parse_ok(
      "<profile><group><transaction>"
      "<flowop type=\"connect\" options=\"remotehost=[::1] protocol=TCP port=5001 wndsz=50k "
      "tcp_nodelay cc=bbr timeout=2s canfail\"/>"
      "<flowop type=\"accept\" options=\"conn=3 remotehost=Host.Example protocol=tcp\"/>"
      "</transaction></group></profile>");
  const auto& ops = p.groups.at(0).transactions.at(0).flowops;
  ASSERT_EQ(ops.size(), 2U);
  const auto& c = std::get<ConnectOp>(ops[0].spec).connection;
  EXPECT_EQ(c.remotehost, "::1");
  EXPECT_EQ(c.port, 5001);
  EXPECT_EQ(c.window_bytes, 51200U);
  EXPECT_TRUE(c.tcp_nodelay);
  EXPECT_EQ(c.congestion_control, "bbr");
  EXPECT_EQ(ops[0].common.timeout, 2s);
  EXPECT_TRUE(ops[0].common.canfail);
  const auto& a = std::get<AcceptOp>(ops[1].spec).connection;
  EXPECT_EQ(a.remotehost, "Host.Example") << "values keep their case";
  EXPECT_EQ(ops[1].common.connection, 3U);
  EXPECT_EQ(ops[1].type, "accept");
}

TEST(Parser, SourceAddressesAreOneAddressOrARange) {
  const auto sources = [](const std::string& value) {
    const Profile p = parse_ok(
        "<profile><group><transaction><flowop type=\"connect\" options=\"remotehost=h "
        "protocol=tcp srcaddr=" +
        value + "\"/></transaction></group></profile>");
    return std::get<ConnectOp>(p.groups.at(0).transactions.at(0).flowops.at(0).spec)
        .connection.source_addresses;
  };
  EXPECT_EQ(sources("198.18.0.7"), (std::vector<std::string>{"198.18.0.7"}));
  EXPECT_EQ(sources("127.0.0.254-127.0.1.1"),
            (std::vector<std::string>{"127.0.0.254", "127.0.0.255", "127.0.1.0", "127.0.1.1"}));
  EXPECT_EQ(
      sources("2001:db8::fe-2001:db8::101"),
      (std::vector<std::string>{"2001:db8::fe", "2001:db8::ff", "2001:db8::100", "2001:db8::101"}));
}

TEST(Parser, BadSourceAddressesAreLocatedErrors) {
  const auto errors = [](const std::string& options) {
    return diagnostics_of("<profile><group><transaction>\n<flowop type=\"connect\" options=\"" +
                          options + "\"/></transaction></group></profile>");
  };
  const auto expect_error = [&](const std::string& options, const std::string& says) {
    const std::string text = errors(options);
    EXPECT_NE(text.find("test.xml:2:"), std::string::npos) << text;
    EXPECT_NE(text.find("error:"), std::string::npos) << text;
    EXPECT_NE(text.find(says), std::string::npos) << options << " -> " << text;
  };
  expect_error("remotehost=h protocol=tcp srcaddr=host.example", "is not an address");
  expect_error("remotehost=h protocol=tcp srcaddr=10.0.0.9-10.0.0.1", "runs backwards");
  expect_error("remotehost=h protocol=tcp srcaddr=10.0.0.1-::1", "not of one family");
  expect_error("remotehost=h protocol=tcp srcaddr=10.0.0.0-10.0.255.255", "the most is 4096");
  expect_error("remotehost=h protocol=tcp srcaddr=2001:db8::1-2001:db9::1", "more than 4096");
  // The same checks, with the same locations, for a UDP connect.
  expect_error("remotehost=h protocol=udp srcaddr=host.example", "is not an address");
  expect_error("remotehost=h protocol=udp srcaddr=10.0.0.9-10.0.0.1", "runs backwards");
}

TEST(Parser, SourceAddressesServeUdpAsTcp) {
  const std::string xml =
      "<profile><group><transaction><flowop type=\"connect\" options=\"remotehost=h "
      "protocol=udp srcaddr=127.0.0.2-127.0.0.3\"/></transaction></group></profile>";
  EXPECT_EQ(diagnostics_of(xml), "");
  const Profile p = parse_ok(xml);
  const auto& c =
      std::get<ConnectOp>(p.groups.at(0).transactions.at(0).flowops.at(0).spec).connection;
  EXPECT_EQ(c.protocol, Protocol::kUdp);
  EXPECT_EQ(c.source_addresses, (std::vector<std::string>{"127.0.0.2", "127.0.0.3"}));
}

TEST(Parser, ReadWriteOptions) {
  const Profile p =
      parse_ok(with_body("<flowop type=\"send\" options=\"size=rand(64,1k) rsize=512 count=4\"/>"
                         "<flowop type=\"RECV\" options=\"size=1g non_blocking\"/>"));
  const auto& ops = p.groups.at(0).transactions.at(1).flowops;
  ASSERT_EQ(ops.size(), 2U);
  EXPECT_EQ(ops[0].type, "send");
  const auto& w = std::get<WriteOp>(ops[0].spec);
  EXPECT_EQ(w.size, (SizeSpec{64, 1024}));
  EXPECT_TRUE(w.size.is_random());
  EXPECT_EQ(w.rsize_bytes, 512U);
  EXPECT_FALSE(w.chunk_bytes);
  EXPECT_EQ(ops[0].common.count, 4U);
  EXPECT_EQ(ops[1].type, "recv") << "types are lower-cased";
  EXPECT_EQ(std::get<ReadOp>(ops[1].spec).size, SizeSpec::fixed(1ULL << 30U));
}

TEST(Parser, SendfileThinkNop) {
  const Profile p =
      parse_ok(with_body("<flowop type=\"sendfile\" options=\"file=/etc/Hostname size=64k\"/>"
                         "<flowop type=\"sendfile\" options=\"dir=/srv\"/>"
                         "<flowop type=\"sendfilev\" options=\"dir=/srv nfiles=8 size=1m\"/>"
                         "<flowop type=\"think\" options=\"duration=250us busy\"/>"
                         "<flowop type=\"think\" options=\"duration=2 idle\"/>"
                         "<flowop type=\"nop\"/>"));
  const auto& ops = p.groups.at(0).transactions.at(1).flowops;
  ASSERT_EQ(ops.size(), 6U);
  EXPECT_EQ(std::get<SendfileOp>(ops[0].spec),
            (SendfileOp{FileSource{"/etc/Hostname", false}, 65536U}));
  EXPECT_EQ(std::get<SendfileOp>(ops[1].spec), (SendfileOp{FileSource{"/srv", true}, {}}));
  EXPECT_EQ(std::get<SendfilevOp>(ops[2].spec),
            (SendfilevOp{FileSource{"/srv", true}, 8, 1U << 20U}));
  EXPECT_EQ(std::get<ThinkOp>(ops[3].spec), (ThinkOp{250us, true}));
  EXPECT_EQ(std::get<ThinkOp>(ops[4].spec), (ThinkOp{2s, false}));
  EXPECT_TRUE(std::holds_alternative<NopOp>(ops[5].spec));
}

TEST(Parser, IgnoredOptionIsAWarningAndTheProfileStillParses) {
  const std::string text = with_body("<flowop type=\"read\" options=\"size=8 duration=30s\"/>");
  const ParseResult r = parse_profile(text, "w.xml", testing::default_variables());
  ASSERT_TRUE(r.profile);
  EXPECT_EQ(r.diagnostics.warning_count(), 1U);
  EXPECT_EQ(r.diagnostics.items().at(0).message,
            "option 'duration' does not apply to 'read' and is ignored");
  EXPECT_EQ(r.diagnostics.items().at(0).location.column, text.find("duration=30s") + 1)
      << "the warning points at the option itself";
}

TEST(Parser, OptionsVariableIsExpandedBeforeTokenizing) {
  Variables v = testing::default_variables();
  v.bindings["opts"] = "size=1k count=2";
  const Profile p = parse_ok(with_body("<flowop type=\"write\" options=\"$opts canfail\"/>"), v);
  const Flowop& op = p.groups.at(0).transactions.at(1).flowops.at(0);
  EXPECT_EQ(std::get<WriteOp>(op.spec).size, SizeSpec::fixed(1024));
  EXPECT_EQ(op.common.count, 2U);
  EXPECT_TRUE(op.common.canfail);
}

TEST(Parser, BracedVariablesInsideValues) {
  Variables v = testing::default_variables();
  v.bindings["kb"] = "16";
  v.bindings["d"] = "/var";
  const Profile p =
      parse_ok(with_body("<flowop type=\"sendfile\" options=\"dir=${d}/www size=${kb}k\"/>"), v);
  EXPECT_EQ(std::get<SendfileOp>(p.groups.at(0).transactions.at(1).flowops.at(0).spec),
            (SendfileOp{FileSource{"/var/www", true}, 16384U}));
}

TEST(Parser, EnvironmentFallbackIsRecordedInUsedVariables) {
  Variables v;
  v.environment = {{"h", "10.0.0.1"}};
  v.bindings = {{"t", "1"}};
  const ParseResult r = parse_profile(kPingPong, "pp.xml", v);
  ASSERT_TRUE(r.profile) << r.diagnostics.format(nullptr);
  EXPECT_EQ(std::get<ConnectOp>(r.profile->groups[0].transactions[0].flowops[0].spec)
                .connection.remotehost,
            "10.0.0.1");
  EXPECT_EQ(r.used_variables.at("h"), "10.0.0.1");
}

TEST(Parser, UnsetVariableNamesItAndItsPlace) {
  Variables v;
  v.bindings = {{"t", "1"}};
  EXPECT_EQ(diagnostics_of(kPingPong, v),
            "test.xml:5:50: error: variable 'h' is not set (give it with --set h=VALUE)\n");
}

TEST(Parser, NoProfileWhenThereAreErrors) {
  const ParseResult r = parse_profile("<profile/>", "x.xml", {});
  EXPECT_FALSE(r.profile);
  EXPECT_TRUE(r.diagnostics.has_errors());
}

TEST(Parser, DiagnosticsAreInFileOrder) {
  const std::string text = with_body(
      "<flowop type=\"read\" options=\"size=1 conn=2\"/>\n<flowop type=\"wirte\"/>\n"
      "<flowop type=\"read\" options=\"bogus\"/>");
  const auto items = parse_profile(text, "o.xml", testing::default_variables()).diagnostics.items();
  ASSERT_GE(items.size(), 2U);
  for (std::size_t i = 1; i < items.size(); ++i) {
    EXPECT_LE(items[i - 1].location.line, items[i].location.line);
  }
}

TEST(Parser, ValidationRunsOnCleanGroupsOnly) {
  // Group 1 has a typo (its connect is lost): no follow-on "no connection" error for its read.
  // Group 2 is clean and really reads without a connection.
  const std::string text =
      "<profile>\n<group><transaction>\n<flowop type=\"conect\" options=\"remotehost=h "
      "protocol=tcp\"/>\n<flowop type=\"read\" options=\"size=1\"/>\n</transaction></group>\n"
      "<group><transaction>\n<flowop type=\"read\" options=\"size=1\"/>\n"
      "</transaction></group>\n</profile>";
  EXPECT_EQ(diagnostics_of(text),
            "test.xml:3:1: error: unknown flowop type 'conect'; did you mean 'connect'?\n"
            "test.xml:7:1: error: 'read' uses the anonymous connection, but no earlier flowop in "
            "this group opens it\n");
}

}  // namespace
}  // namespace volley::profile

namespace volley::profile {
namespace {

// Numbers are checked where they enter: a typo cannot make a run allocate for 10^11 strands or a
// 1 TiB buffer.
TEST(ParserRanges, StrandsAndSizesBeyondTheirLimitsAreLocatedErrors) {
  const auto huge_threads = parse_profile(
      R"(<profile name="p"><group nthreads="99999999999"><transaction iterations="1">)"
      R"(<flowop type="think" options="duration=1ms"/></transaction></group></profile>)",
      "p.xml", testing::default_variables());
  EXPECT_FALSE(huge_threads.profile);
  EXPECT_NE(huge_threads.diagnostics.format(nullptr).find("the most is 1000000"), std::string::npos)
      << huge_threads.diagnostics.format(nullptr);
  const auto huge_size =
      parse_profile(R"(<profile name="p"><group nthreads="1"><transaction iterations="1">)"
                    R"(<flowop type="connect" options="remotehost=h protocol=tcp"/>)"
                    R"(<flowop type="write" options="size=1t"/></transaction></group></profile>)",
                    "p.xml", testing::default_variables());
  EXPECT_FALSE(huge_size.profile);
  EXPECT_NE(huge_size.diagnostics.format(nullptr).find("the most is"), std::string::npos)
      << huge_size.diagnostics.format(nullptr);
}

}  // namespace
}  // namespace volley::profile

namespace volley::profile {
namespace {

/// The errors of `text`.
std::vector<core::Diagnostic> errors_of(const std::string& text) {
  std::vector<core::Diagnostic> out;
  const ParseResult result = parse_profile(text, "cut.xml", testing::default_variables());
  for (const auto& d : result.diagnostics.items()) {
    if (d.severity == core::Severity::kError) out.push_back(d);
  }
  return out;
}

// A file cut off or missing its closing tags says so where it ends, naming what is still open
// and the line it was opened on, innermost first.
TEST(ParserEarlyEnd, AfterAnOpeningTag) {
  const auto errors =
      errors_of("<profile name=\"p\">\n  <group nthreads=\"1\">\n    <transaction>\n");
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_EQ(errors[0].message,
            "the file ended early: <transaction> (opened at line 3) is not closed; nor are "
            "<group> (line 2) and <profile> (line 1)");
  EXPECT_EQ(errors[0].location.line, 3U);
  EXPECT_EQ(errors[0].location.column, 18U);  // just past the last tag
}

TEST(ParserEarlyEnd, MissingOnlyTheLastClosingTag) {
  const auto errors =
      errors_of(std::string(kPingPong).substr(0, std::string(kPingPong).rfind("</profile>")));
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_EQ(errors[0].message.rfind("the file ended early: <profile> (opened at line ", 0), 0U)
      << errors[0].message;
  EXPECT_EQ(errors[0].message.find("nor"), std::string::npos) << errors[0].message;
}

TEST(ParserEarlyEnd, MidTagAndMidAttribute) {
  const std::string head = "<profile>\n<group>\n<transaction>\n";
  const auto mid_tag = errors_of(head + "<flowop type=\"read\"");
  ASSERT_EQ(mid_tag.size(), 1U);
  EXPECT_EQ(mid_tag[0].message,
            "the file ended early: the tag <flowop> (opened at line 4) is not closed; nor are "
            "<transaction> (line 3), <group> (line 2) and <profile> (line 1)");
  EXPECT_EQ(mid_tag[0].location.line, 4U);
  EXPECT_EQ(mid_tag[0].location.column, 20U);

  const auto mid_attribute = errors_of(head + "<flowop type=\"read\" options=\"size=6");
  ASSERT_EQ(mid_attribute.size(), 1U);
  EXPECT_EQ(mid_attribute[0].message,
            "the file ended early: the value of 'options' in <flowop> (opened at line 4) is not "
            "closed; nor are <transaction> (line 3), <group> (line 2) and <profile> (line 1)");

  const auto mid_comment = errors_of("<?xml version=\"1.0\"?>\n<!-- a comment\n");
  ASSERT_EQ(mid_comment.size(), 1U);
  EXPECT_EQ(mid_comment[0].message,
            "the file ended early: the comment (opened at line 2) is not closed");
}

// However deep the nesting left open, the message names the innermost few and counts the rest,
// and only the lines it names are looked up.
TEST(ParserEarlyEnd, ManyOpenElementsAreCountedNotListed) {
  std::string deep;
  for (int i = 0; i < 50000; ++i) deep += "<group>\n";
  const auto start = std::chrono::steady_clock::now();
  const auto errors = errors_of("<profile>\n" + deep);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_EQ(errors[0].message,
            "the file ended early: <group> (opened at line 50001) is not closed; nor are "
            "<group> (line 50000), <group> (line 49999), <group> (line 49998), "
            "<group> (line 49997) and 49,995 more, the outermost <profile> (line 1)");
  EXPECT_LT(took, std::chrono::seconds(5));  // took 8 s when each line was a scan from the start
}

TEST(ParserEarlyEnd, EmptyFile) {
  for (const std::string text : {"", "\n", "  \n\t\n"}) {
    const auto errors = errors_of(text);
    ASSERT_EQ(errors.size(), 1U);
    EXPECT_EQ(errors[0].message, "the file is empty; expected <profile>");
    EXPECT_EQ(errors[0].location.line, 1U);
    EXPECT_EQ(errors[0].location.column, 1U);
  }
}

// Every prefix of a valid profile is a truncated file: each gets one error that says the file
// ended early (or that there is nothing yet), never pugixml's "start-end tags mismatch".
TEST(ParserEarlyEnd, EveryPrefixOfAProfile) {
  const std::string whole(kPingPong);
  const std::size_t complete = whole.find_last_not_of(" \t\r\n") + 1;
  for (std::size_t n = 0; n < complete; ++n) {
    const auto errors = errors_of(whole.substr(0, n));
    ASSERT_EQ(errors.size(), 1U) << "cut at " << n;
    const std::string& m = errors[0].message;
    const bool said = m.rfind("the file ended early: ", 0) == 0 ||
                      m.rfind("the file is empty", 0) == 0 ||
                      m.rfind("the file has no root element", 0) == 0;
    EXPECT_TRUE(said) << "cut at " << n << ": " << m;
  }
}

// A wrong nesting before the end is still told as one: the end of the file is not blamed.
TEST(ParserEarlyEnd, AMismatchBeforeTheEndIsNotAnEarlyEnd) {
  const auto errors = errors_of("<profile>\n<goup>\n<transaction>\n</transaction>\n</group>\n");
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].message.find("did you mean <group>?"), std::string::npos)
      << errors[0].message;
}

}  // namespace
}  // namespace volley::profile
