// srcaddr= between two real (virtual) hosts: the master's namespace has three addresses on its
// link to the slave's, and a profile's TCP and UDP connects each bind to the two it names. The
// slave (a real `volley serve` in its own namespace, stopped by PID) must see its data
// connections come from those two addresses, both protocols, while the control connection comes
// from the third, and mirror every byte. Needs root (CAP_NET_ADMIN) and `ip`: skipped otherwise.
//
//   master 198.18.4.1, .10, .11 ── veth ── 198.18.4.2 slave
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/local_run.hpp"
#include "support/netns.hpp"
#include "support/proc_sockets.hpp"
#include "support/process.hpp"
#include "support/slave_process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kSrcaddrSlave = "198.18.4.2";
constexpr std::uint16_t kSrcaddrControlPort = 20000;
constexpr std::uint64_t kSrcaddrIterations = 100;

/// Group 0 connects over TCP, group 1 over UDP, 2 strands each, each strand from one of
/// 198.18.4.10-11; a 64-byte ping-pong, a pause that keeps the connections open long enough to be
/// seen in /proc, and a disconnect.
std::string profile_text() {
  std::string groups;
  for (const char* protocol : {"tcp", "udp"}) {
    groups += fmt::format(R"XML(  <group nthreads="2">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$s protocol={} srcaddr=198.18.4.10-198.18.4.11"/></transaction>
    <transaction iterations="{}">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
    <transaction iterations="1"><flowop type="think" options="duration=800ms"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
)XML",
                          protocol, kSrcaddrIterations);
  }
  return "<?xml version=\"1.0\"?>\n<profile name=\"srcaddr\">\n" + groups + "</profile>\n";
}

TEST(SrcaddrNetns, TcpAndUdpConnectsComeFromTheirSourceAddresses) {
  if (auto why = netns_unavailable(); !why.empty()) GTEST_SKIP() << why;
  Namespaces hosts({"volley-srcm", "volley-srcs"});
  const std::string& m = hosts[0];
  const std::string& s = hosts[1];
  auto setup = veth_pair(m, s, "198.18.4.1/24", std::string(kSrcaddrSlave) + "/24");
  setup.push_back({"-n", m, "addr", "add", "198.18.4.10/24", "dev", "to-s"});
  setup.push_back({"-n", m, "addr", "add", "198.18.4.11/24", "dev", "to-s"});
  if (auto problem = hosts.create(setup); !problem.empty()) {
    GTEST_SKIP() << "cannot make network namespaces here: " << problem;
  }
  TempDir dir;
  // Not loopback: the slave needs a key, and the master the same one.
  const fs::path key = dir.write("key", std::string(64, '7') + "\n");
  fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write);
  SlaveProcess slave(netns_exec(s, serve_command(listen_address(kSrcaddrSlave, kSrcaddrControlPort),
                                                 {"-q", "--key-file", key.string()})),
                     kSrcaddrSlave, kSrcaddrControlPort, m);
  ASSERT_TRUE(reachable_from(m, kSrcaddrSlave, kSrcaddrControlPort)) << slave.log();

  const fs::path profile = dir.write("p.xml", profile_text());
  const fs::path out = dir.path() / "r.json";
  Process master(netns_exec(
      m, {VOLLEY_BINARY, "run", profile.string(), "-P", std::to_string(kSrcaddrControlPort),
          "--set", fmt::format("s={}", kSrcaddrSlave), "--json", out.string(), "-q", "--key-file",
          key.string()}));
  // While it runs: what the slave's sockets are connected to, per protocol.
  SocketAddresses tcp;
  SocketAddresses udp;
  const auto net = fmt::format("/proc/{}/net/", slave.pid());
  const auto from_both = [](const SocketAddresses& a) {
    return a.remote.count("198.18.4.10") != 0 && a.remote.count("198.18.4.11") != 0;
  };
  const auto give_up = std::chrono::steady_clock::now() + 30s;
  while (!(from_both(tcp) && from_both(udp)) && running(master.pid()) &&
         std::chrono::steady_clock::now() < give_up) {
    add_socket_addresses(net + "tcp", tcp);
    add_socket_addresses(net + "tcp6", tcp);
    add_socket_addresses(net + "udp", udp);
    add_socket_addresses(net + "udp6", udp);
    std::this_thread::sleep_for(2ms);
  }
  const ProcessResult r = master.wait(60s);
  slave.stop();
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(from_both(tcp)) << "TCP peers: " << fmt::format("{}", fmt::join(tcp.remote, " "));
  EXPECT_TRUE(from_both(udp)) << "UDP peers: " << fmt::format("{}", fmt::join(udp.remote, " "));
  // The control connection, made without srcaddr=, came from the master's first address.
  EXPECT_EQ(tcp.remote.count("198.18.4.1"), 1U);
  EXPECT_EQ(udp.remote.count("198.18.4.1"), 0U) << "a UDP flow left from the default address";

  const json doc = read_json(out);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  EXPECT_EQ(doc["totals"]["errors"]["total"].get<std::uint64_t>(), 0U);
  // Every byte mirrored, each way, for both protocols (no loss on a quiet veth link).
  for (std::size_t g = 0; g < 2; ++g) {
    SCOPED_TRACE(g == 0 ? "tcp" : "udp");
    const json& mine = doc.at("groups").at(g).at("transactions").at(1).at("flowops");
    const json& theirs =
        doc.at("slaves").at(0).at("groups").at(g).at("transactions").at(1).at("flowops");
    const std::uint64_t bytes = 2 * kSrcaddrIterations * 64;
    EXPECT_EQ(mine.at(0).at("bytes_written").get<std::uint64_t>(), bytes);
    EXPECT_EQ(theirs.at(0).at("bytes_read").get<std::uint64_t>(), bytes);
    EXPECT_EQ(theirs.at(1).at("bytes_written").get<std::uint64_t>(), bytes);
    EXPECT_EQ(mine.at(1).at("bytes_read").get<std::uint64_t>(), bytes);
  }
}

// One source address towards several destination ports: the TCP connect picks the port (the
// bind before it takes the address only), so each destination port has the whole ephemeral range.
// In a namespace whose range is 32 ports (a few of them the listeners'), 64 connections from
// 127.0.0.2 to the slave's 4 data ports (16 to each) fit; a bind that took a port for itself
// would run out half way.
TEST(SrcaddrNetns, OneSourceAddressHasTheRangeTowardsEachDestinationPort) {
  if (auto why = netns_unavailable(); !why.empty()) GTEST_SKIP() << why;
  Namespaces host({"volley-srcport"});
  const std::string& ns = host[0];
  if (auto problem = host.create({{"-n", ns, "link", "set", "lo", "up"}}); !problem.empty()) {
    GTEST_SKIP() << "cannot make network namespaces here: " << problem;
  }
  Process set(netns_exec(
      ns, {"/bin/sh", "-c", "echo '40000 40031' > /proc/sys/net/ipv4/ip_local_port_range"}));
  ASSERT_EQ(set.wait(20s).exit_code, 0);
  TempDir dir;
  const fs::path profile = dir.write("p.xml", R"XML(<?xml version="1.0"?>
<profile name="one source">
  <group nthreads="64">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp srcaddr=127.0.0.2"/></transaction>
    <transaction iterations="20">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML");
  const fs::path out = dir.path() / "r.json";
  Process master(
      netns_exec(ns, {VOLLEY_BINARY, "run", profile.string(), "--local", "--processes", "1",
                      "--workers", "1", "--slave-workers", "4", "--json", out.string(), "-q"}));
  const ProcessResult r = master.wait(60s);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const json doc = read_json(out);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  EXPECT_EQ(doc["totals"]["connections_established"], 64);
  EXPECT_EQ(doc["totals"]["errors"]["total"], 0);
}

}  // namespace
}  // namespace volley::test
