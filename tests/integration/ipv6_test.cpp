// IPv6 end to end on the loopback ::1, through the real CLI against a real `volley serve`: the
// control connection, the data connections both ways (TCP and UDP), --local, uperf's -s/-P, and
// the errors for malformed addresses. The slave listens on ::1 only, so every data connection that
// works went over IPv6: the slave's data listeners bind the control connection's local address,
// and a slave connects back to the master's address on that connection. Skipped where the host
// has no IPv6 (/proc/sys/net/ipv6/conf/all/disable_ipv6, or no ::1).
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/both_ways_profile.hpp"
#include "support/net.hpp"
#include "support/process.hpp"
#include "support/slave_process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

json read_json(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in, nullptr, false);
}

/// A `volley serve --listen LISTEN EXTRA...` on `port`, waited for on `probe` (an address it must
/// accept on), stopped by PID.
class Slave : public SlaveProcess {
 public:
  Slave(const std::string& listen, const std::string& probe, std::uint16_t port,
        const std::vector<std::string>& extra = {"--workers", "1"})
      : SlaveProcess(serve_command(listen, extra), probe, port) {}
};

class Ipv6 : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ifstream disabled("/proc/sys/net/ipv6/conf/all/disable_ipv6");
    int off = 0;
    if (disabled >> off && off != 0) GTEST_SKIP() << "IPv6 is disabled on this host";
    if (!ipv6_loopback_available()) GTEST_SKIP() << "no IPv6 loopback (::1) here";
  }
  TempDir dir_;
};

/// Two groups to `host` (as written in remotehost=): one connects to the slave, one accepts
/// from it; a ping-pong each.
std::string both_ways(const std::string& host, const std::string& protocol = "tcp") {
  return both_ways_profile(host, protocol, "300ms");
}

/// Every transaction's bytes, master against slave, both directions.
void expect_equal_bytes(const json& doc) {
  for (const auto& c : doc["comparison"]) {
    EXPECT_EQ(c["master_bytes"], c["slave_bytes"]) << c["host"];
    EXPECT_GT(c["master_bytes"].get<std::uint64_t>(), 0U) << c["host"];
  }
}

void expect_ok_both_ways(const ProcessResult& r, const fs::path& out, const std::string& host) {
  ASSERT_FALSE(r.timed_out);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const json doc = read_json(out);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  EXPECT_EQ(doc["totals"]["connections_established"].get<std::uint64_t>(), 5U);
  ASSERT_EQ(doc["slaves"].size(), 1U);
  EXPECT_EQ(doc["slaves"][0]["host"], host);
  EXPECT_GT(doc["groups"][0]["transactions"][1]["transactions"].get<std::uint64_t>(), 0U);
  EXPECT_GT(doc["groups"][1]["transactions"][1]["transactions"].get<std::uint64_t>(), 0U);
  expect_equal_bytes(doc);
}

TEST_F(Ipv6, TcpBothWaysAgainstASlaveListeningOnV6LoopbackOnly) {
  const std::uint16_t port = free_port();
  Slave slave(fmt::format("[::1]:{}", port), "::1", port);
  const auto out = dir_.path() / "r.json";
  for (const std::string host : {"::1", "[::1]"}) {
    SCOPED_TRACE(host);
    const auto profile = dir_.write("v6.xml", both_ways(host));
    const auto r =
        run_volley({"run", profile, "-P", std::to_string(port), "--json", out, "-q"}, 60s);
    expect_ok_both_ways(r, out, "::1");
  }
  const ProcessResult log = slave.stop();
  // Addresses in log lines are bracketed when they are IPv6, so the port stands apart.
  EXPECT_NE(log.err.find(fmt::format("listening on [::1]:{}", port)), std::string::npos) << log.err;
  EXPECT_NE(log.err.find("master [::1]:"), std::string::npos) << log.err;
}

TEST_F(Ipv6, UdpBothWaysOverV6Loopback) {
  const std::uint16_t port = free_port();
  Slave slave(fmt::format("[::1]:{}", port), "::1", port);
  const auto profile = dir_.write("v6udp.xml", both_ways("::1", "udp"));
  const auto out = dir_.path() / "r.json";
  const auto r = run_volley({"run", profile, "-P", std::to_string(port), "--json", out, "-q"}, 60s);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const json doc = read_json(out);
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  // Datagrams arrived on the slave for the master's writes, and on the master for the slave's.
  const auto& slave_doc = doc["slaves"][0];
  for (std::size_t g = 0; g < 2; ++g) {
    const auto& mine = doc["groups"][g]["transactions"][1]["flowops"];
    const auto& theirs = slave_doc["groups"][g]["transactions"][1]["flowops"];
    EXPECT_GT(mine[0]["datagrams"]["sent"].get<std::uint64_t>(), 0U) << "group " << g;
    EXPECT_GT(theirs[0]["datagrams"]["received"].get<std::uint64_t>(), 0U) << "group " << g;
  }
}

TEST_F(Ipv6, LocalWithAnIpv6HostRunsItsSlaveOnV6Loopback) {
  const auto profile = dir_.write("v6local.xml", both_ways("$h"));
  const auto out = dir_.path() / "r.json";
  const auto r = run_volley({"run", profile, "--local", "--set", "h=::1", "--json", out}, 60s);
  expect_ok_both_ways(r, out, "::1");
  EXPECT_NE(r.out.find("local slave on [::1]:"), std::string::npos) << r.out;
  // An IPv4 host keeps the IPv4 loopback.
  const auto r4 =
      run_volley({"run", profile, "--local", "--set", "h=127.0.0.1", "--json", out}, 60s);
  expect_ok_both_ways(r4, out, "127.0.0.1");
  EXPECT_NE(r4.out.find("local slave on 127.0.0.1:"), std::string::npos) << r4.out;
}

TEST_F(Ipv6, ServeOnAllAddressesTakesIpv4AndIpv6Masters) {
  const std::uint16_t port = free_port();
  // "PORT" alone means every address, IPv6 and IPv4 (dual stack).
  Slave slave(std::to_string(port), "::1", port, {"--workers", "1", "--insecure"});
  ASSERT_TRUE(accepts_connections("127.0.0.1", port)) << slave.log();
  const auto out = dir_.path() / "r.json";
  for (const std::string host : {"::1", "127.0.0.1"}) {
    SCOPED_TRACE(host);
    const auto profile = dir_.write("any.xml", both_ways(host));
    const auto r =
        run_volley({"run", profile, "-P", std::to_string(port), "--json", out, "-q"}, 60s);
    expect_ok_both_ways(r, out, host);
  }
}

TEST_F(Ipv6, UperfSlaveWithAPortTakesIpv6Masters) {
  const std::uint16_t port = free_port();
  const auto key = dir_.write("key", std::string(64, 'a') + "\n");
  fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write);
  SlaveProcess slave({VOLLEY_BINARY, "-s", "-P", std::to_string(port), "--key-file", key.string()},
                     "::1", port);
  const auto profile = dir_.write("uperf.xml", both_ways("::1"));
  const auto r =
      run_volley({"-m", profile, "-P", std::to_string(port), "--key-file", key.string()}, 60s);
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out << slave.stop().err;
}

TEST_F(Ipv6, AnUnreachableIpv6SlaveIsNamedWithItsPortApart) {
  const std::uint16_t port = free_port();
  const auto profile = dir_.write("none.xml", both_ways("::1"));
  const auto r = run_volley({"run", profile, "-P", std::to_string(port), "-q"}, 60s);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(fmt::format("at [::1]:{}", port)), std::string::npos) << r.err;
}

TEST(Ipv6Input, DumpNamesAnIpv6SlaveBareOrInBrackets) {
  TempDir dir;
  const auto profile = dir.write("v6.xml", both_ways("[2001:db8::2]"));
  for (const std::string host : {"2001:db8::2", "[2001:db8::2]"}) {
    const auto r = run_volley({"dump", profile, "--host", host}, 30s);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("# slave serving remotehost '2001:db8::2'"), std::string::npos) << r.out;
  }
}

TEST(Ipv6Input, MalformedAddressesAreBadInputNamingWhere) {
  TempDir dir;
  struct Case {
    std::string host;
    std::string says;
  };
  for (const Case& c :
       {Case{"1::2::3", "'1::2::3' is not an IPv6 address"}, Case{"[::1]:20000", "port"},
        Case{"[10.0.0.1]", "brackets are for IPv6 addresses only"}, Case{"fe80::1%", "zone"},
        Case{"slave:20000", "port"}}) {
    SCOPED_TRACE(c.host);
    const auto profile = dir.write("bad.xml", both_ways(c.host));
    const auto r = run_volley({"check", profile}, 30s);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    const std::string all = r.out + r.err;
    EXPECT_NE(all.find("bad.xml:4:"), std::string::npos) << all;
    EXPECT_NE(all.find("error: option 'remotehost'"), std::string::npos) << all;
    EXPECT_NE(all.find(c.says), std::string::npos) << all;
  }
  // A zone is the master's interface: checked by `run`, not by `check` (which may run elsewhere).
  const auto zoned = dir.write("zone.xml", both_ways("fe80::1%volley-none0"));
  EXPECT_EQ(run_volley({"check", zoned}, 30s).exit_code, 0);
  const auto run = run_volley({"run", zoned, "-q"}, 30s);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("no interface 'volley-none0'"), std::string::npos) << run.err;
  for (const std::string listen : {"[::1", "[::1]:", "[::1]:70000", "1::2::3", "[10.0.0.1]:5",
                                   "[fe80::1%volley-none0]:5", "localhost:5"}) {
    SCOPED_TRACE(listen);
    const auto r = run_volley({"serve", "--listen", listen, "-q"}, 10s);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--listen '" + listen + "'"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace volley::test
