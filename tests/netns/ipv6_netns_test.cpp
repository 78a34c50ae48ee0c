// IPv6 between two hosts: the master and a slave each in a network namespace of its own, joined
// by a veth pair with addresses in the IPv6 benchmarking range 2001:2::/48 (RFC 5180), plus
// link-local addresses reached with a zone (fe80::2%to-s):
//
//   master 2001:2::1, fe80::1 (to-s) ── veth ── (to-m) 2001:2::2, fe80::2 slave
//
// The slave is `volley serve --listen 20000` (every address, dual stack) and the profile
// connects to it and accepts from it, over TCP and UDP. The addresses are added with `nodad`, so
// they are usable at once (duplicate address detection would hold them tentative for a second or
// more). Needs root (CAP_NET_ADMIN), `ip` and IPv6: skipped with a message otherwise.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/both_ways_profile.hpp"
#include "support/netns.hpp"
#include "support/process.hpp"
#include "support/slave_process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kV6Slave = "2001:2::2";
constexpr const char* kSlaveLinkLocal = "fe80::2%to-s";  // as the master names it
constexpr std::uint16_t kV6ControlPort = 20000;

json read_v6_json(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in, nullptr, false);
}

class Ipv6Netns : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = netns_unavailable(); !why.empty()) GTEST_SKIP() << why;
    std::ifstream disabled("/proc/sys/net/ipv6/conf/all/disable_ipv6");
    int off = 0;
    if (!(disabled >> off) || off != 0) GTEST_SKIP() << "IPv6 is disabled or absent on this host";
    const std::string& m = master();
    const std::string& s = slave_ns();
    if (auto problem = namespaces_.create({
            {"-n", m, "link", "add", "name", "to-s", "type", "veth", "peer", "name", "to-m",
             "netns", s},
            {"-n", m, "addr", "add", "2001:2::1/64", "dev", "to-s", "nodad"},
            {"-n", m, "addr", "add", "fe80::1/64", "dev", "to-s", "nodad"},
            {"-n", s, "addr", "add", std::string(kV6Slave) + "/64", "dev", "to-m", "nodad"},
            {"-n", s, "addr", "add", "fe80::2/64", "dev", "to-m", "nodad"},
            {"-n", m, "link", "set", "dev", "lo", "up"},
            {"-n", m, "link", "set", "dev", "to-s", "up"},
            {"-n", s, "link", "set", "dev", "lo", "up"},
            {"-n", s, "link", "set", "dev", "to-m", "up"},
        });
        !problem.empty()) {
      GTEST_SKIP() << "cannot build the link: " << problem;
    }
    key_ = dir_.write("key", std::string(64, '6') + "\n");
    fs::permissions(key_, fs::perms::owner_read | fs::perms::owner_write);
    // Every address (dual stack): not loopback, so with a key. Waited for from the master's side.
    slave_ = std::make_unique<SlaveProcess>(
        netns_exec(s, serve_command(std::to_string(kV6ControlPort),
                                    {"--workers", "1", "--key-file", key_.string()})),
        kV6Slave, kV6ControlPort, m);
    ASSERT_TRUE(reachable_from(m, kV6Slave, kV6ControlPort)) << slave_->log();
  }

  void TearDown() override {
    if (slave_) {
      EXPECT_FALSE(slave_->stop().timed_out) << "the slave ignored SIGTERM";
    }
  }

  [[nodiscard]] const std::string& master() const { return namespaces_[0]; }
  [[nodiscard]] const std::string& slave_ns() const { return namespaces_[1]; }

  /// `volley run` in the master's namespace with h=`host`; the JSON document.
  json run_master(const std::string& protocol, const std::string& host) {
    const auto profile = dir_.write(protocol + ".xml", both_ways_profile("$h", protocol, "500ms"));
    const auto out = dir_.path() / (protocol + ".json");
    const ProcessResult r =
        Process(netns_exec(master(), {VOLLEY_BINARY, "run", profile.string(), "-P",
                                      std::to_string(kV6ControlPort), "--set", "h=" + host,
                                      "--json", out.string(), "-q", "--key-file", key_.string()}))
            .wait(60s);
    EXPECT_FALSE(r.timed_out) << "the run did not end";
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out << slave_->log();
    return read_v6_json(out);
  }

  TempDir dir_;
  fs::path key_;
  Namespaces namespaces_{{"volley-6m", "volley-6s"}};  // deleted after the slave is stopped
  std::unique_ptr<SlaveProcess> slave_;
};

void expect_ok_tcp(const json& doc, const std::string& host) {
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  EXPECT_EQ(doc["slaves"][0]["host"], host);
  EXPECT_EQ(doc["totals"]["connections_established"].get<std::uint64_t>(), 5U);
  for (const auto& c : doc["comparison"]) {
    EXPECT_EQ(c["master_bytes"], c["slave_bytes"]) << c["host"];
    EXPECT_GT(c["master_bytes"].get<std::uint64_t>(), 0U) << c["host"];
  }
}

TEST_F(Ipv6Netns, TcpBothWaysOverTheBenchmarkingRange) {
  expect_ok_tcp(run_master("tcp", kV6Slave), kV6Slave);
  // The slave saw its master by its IPv6 address, bracketed apart from the port.
  EXPECT_NE(slave_->log().find("master [2001:2::1]:"), std::string::npos) << slave_->log();
}

TEST_F(Ipv6Netns, UdpBothWaysOverTheBenchmarkingRange) {
  const json doc = run_master("udp", kV6Slave);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  for (std::size_t g = 0; g < 2; ++g) {
    const auto& sent = doc["groups"][g]["transactions"][1]["flowops"][0]["datagrams"]["sent"];
    const auto& got =
        doc["slaves"][0]["groups"][g]["transactions"][1]["flowops"][0]["datagrams"]["received"];
    EXPECT_GT(sent.get<std::uint64_t>(), 0U) << "group " << g;
    EXPECT_GT(got.get<std::uint64_t>(), 0U) << "group " << g;
  }
}

TEST_F(Ipv6Netns, LinkLocalWithAZoneBothWays) {
  // The zone names the master's interface; the slave connects back to fe80::1 on its own.
  expect_ok_tcp(run_master("tcp", kSlaveLinkLocal), kSlaveLinkLocal);
}

}  // namespace
}  // namespace volley::test
