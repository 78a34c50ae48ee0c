#include "volley/core/host_port.hpp"

#include <gtest/gtest.h>

namespace volley::core {
namespace {

HostPort ok(std::string_view text) {
  HostPort p = parse_host_port(text);
  EXPECT_EQ(p.error, "") << text;
  return p;
}

std::string error_of(std::string_view text) {
  const HostPort p = parse_host_port(text);
  EXPECT_NE(p.error, "") << text << " was taken as host '" << p.host << "'";
  return p.error;
}

TEST(HostPort, Ipv4AndNamesWithAndWithoutAPort) {
  EXPECT_EQ(ok("10.0.0.2").host, "10.0.0.2");
  EXPECT_FALSE(ok("10.0.0.2").port);
  EXPECT_EQ(ok("10.0.0.2:20000").host, "10.0.0.2");
  EXPECT_EQ(ok("10.0.0.2:20000").port, 20000);
  EXPECT_EQ(ok("slave-a.example_lab").host, "slave-a.example_lab");
  EXPECT_EQ(ok("slave-a:1").port, 1);
}

TEST(HostPort, Ipv6BareBracketedAndWithAPort) {
  EXPECT_EQ(ok("::1").host, "::1");
  EXPECT_FALSE(ok("::1").port);
  EXPECT_EQ(ok("[::1]").host, "::1");
  EXPECT_FALSE(ok("[::1]").port);
  const HostPort p = ok("[2001:db8::2]:20000");
  EXPECT_EQ(p.host, "2001:db8::2");
  EXPECT_EQ(p.port, 20000);
  EXPECT_EQ(ok("[::]:0").port, 0) << "a listener's any free port";
  EXPECT_EQ(ok("2001:2::2").host, "2001:2::2");
  EXPECT_EQ(ok("::ffff:10.0.0.1").host, "::ffff:10.0.0.1");
}

TEST(HostPort, ZonesAreKeptAndCheckedForFormOnly) {
  EXPECT_EQ(ok("fe80::1%eth0").host, "fe80::1%eth0");
  EXPECT_EQ(ok("[fe80::1%veth-a.2]:20000").host, "fe80::1%veth-a.2");
  EXPECT_EQ(ok("fe80::1%3").host, "fe80::1%3");
  EXPECT_NE(error_of("fe80::1%").find("zone"), std::string::npos);
  EXPECT_NE(error_of("fe80::1%eth 0").find("zone"), std::string::npos);
}

TEST(HostPort, MalformedTextSaysWhatIsWrong) {
  EXPECT_NE(error_of("[::1").find("unbalanced '['"), std::string::npos);
  EXPECT_NE(error_of("::1]").find("not an IPv6 address"), std::string::npos);
  EXPECT_NE(error_of("1::2::3").find("'1::2::3' is not an IPv6 address"), std::string::npos);
  EXPECT_NE(error_of("[10.0.0.1]").find("brackets are for IPv6"), std::string::npos);
  EXPECT_NE(error_of("[slave-a]:20000").find("brackets are for IPv6"), std::string::npos);
  EXPECT_NE(error_of("[::1]20000").find("only ':PORT'"), std::string::npos);
  EXPECT_NE(error_of("[::1]:").find("not a port number"), std::string::npos);
  EXPECT_NE(error_of("[::1]:65536").find("not a port number"), std::string::npos);
  EXPECT_NE(error_of("host:http").find("'http' is not a port number"), std::string::npos);
  EXPECT_NE(error_of(":20000").find("no host"), std::string::npos);
  EXPECT_NE(error_of("a b").find("not a host name"), std::string::npos);
  EXPECT_NE(error_of("").find("empty"), std::string::npos);
  EXPECT_NE(error_of("[]").find("not an IPv6 address"), std::string::npos);
}

TEST(HostPort, Ipv6Literals) {
  EXPECT_TRUE(is_ipv6_literal("::1"));
  EXPECT_TRUE(is_ipv6_literal("fe80::1%eth0"));
  EXPECT_FALSE(is_ipv6_literal("127.0.0.1"));
  EXPECT_FALSE(is_ipv6_literal("localhost"));
  EXPECT_FALSE(is_ipv6_literal("[::1]"));
}

TEST(HostPort, PrintingBracketsIpv6Only) {
  EXPECT_EQ(format_host_port("::1", 20000), "[::1]:20000");
  EXPECT_EQ(format_host_port("fe80::1%eth0", 5), "[fe80::1%eth0]:5");
  EXPECT_EQ(format_host_port("10.0.0.2", 20000), "10.0.0.2:20000");
  EXPECT_EQ(format_host_port("slave-a", 1), "slave-a:1");
}

TEST(HostPort, WhatIsPrintedParsesBack) {
  for (const char* host : {"::1", "2001:db8::2", "fe80::1%eth0", "10.0.0.2", "slave-a"}) {
    const HostPort p = ok(format_host_port(host, 20000));
    EXPECT_EQ(p.host, host);
    EXPECT_EQ(p.port, 20000);
  }
}

}  // namespace
}  // namespace volley::core
