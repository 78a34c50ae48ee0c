// Kernel counters on two hosts: the master and a slave each in a network namespace of its own,
// joined by a veth pair (198.18.5.1 -- 198.18.5.2). /proc/net/snmp is per namespace, so each
// side reports only its own: an unpaced UDP stream into the slave's receive buffer of a few
// datagrams (wndsz) overflows it, and Udp.RcvbufErrors moves on the slave, not on the master;
// the master's text report lists it under the slave. Needs root (CAP_NET_ADMIN) and `ip`:
// skipped with a message otherwise.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/netns.hpp"
#include "support/process.hpp"
#include "support/slave_process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kCountersSlave = "198.18.5.2";
constexpr std::uint16_t kCountersControlPort = 20000;

std::uint64_t rcvbuf_errors(const nlohmann::json& side) {
  return side.at("counters").at("Udp.RcvbufErrors").get<std::uint64_t>();
}

TEST(KernelCountersNetns, EachHostReportsItsOwnNamespace) {
  if (auto why = netns_unavailable(); !why.empty()) GTEST_SKIP() << why;
  Namespaces ns({"volley-km", "volley-ks"});
  const std::string& m = ns[0];
  const std::string& s = ns[1];
  if (auto problem =
          ns.create(veth_pair(m, s, "198.18.5.1/24", std::string(kCountersSlave) + "/24"));
      !problem.empty()) {
    GTEST_SKIP() << "cannot make network namespaces here: " << problem;
  }
  TempDir dir;
  // Not loopback: the slave needs a key, and the master the same one.
  const fs::path key = dir.write("key", std::string(64, '7') + "\n");
  fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write);
  const fs::path profile = dir.write("udp.xml", R"XML(<?xml version="1.0"?>
<profile name="udp overflow">
  <group nthreads="1">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=udp wndsz=4k"/></transaction>
    <transaction duration="1s"><flowop type="write" options="size=1472"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML");
  SlaveProcess slave(
      netns_exec(s, serve_command(listen_address(kCountersSlave, kCountersControlPort),
                                  {"-q", "--key-file", key.string()})),
      kCountersSlave, kCountersControlPort, s);
  const fs::path json_path = dir.path() / "r.json";
  Process master(netns_exec(
      m, {VOLLEY_BINARY, "run", profile.string(), "-P", std::to_string(kCountersControlPort),
          "--set", std::string("h=") + kCountersSlave, "--json", json_path.string(), "--key-file",
          key.string()}));
  const ProcessResult r = master.wait(60s);
  EXPECT_FALSE(slave.stop().timed_out);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << slave.log();

  const auto doc = nlohmann::json::parse(std::ifstream(json_path));
  const auto& kernel = doc.at("kernel");
  ASSERT_TRUE(kernel.at("local").is_object()) << kernel;
  ASSERT_TRUE(kernel.at("remote").at(0).is_object()) << kernel;
  EXPECT_GT(rcvbuf_errors(kernel.at("remote").at(0)), 0U) << kernel.at("remote").at(0);
  // Nothing in the master's namespace received a datagram.
  EXPECT_EQ(rcvbuf_errors(kernel.at("local")), 0U) << kernel.at("local");
  // The text report: the slave's section names the counter.
  const auto section = r.out.find("Kernel counters, timed part");
  ASSERT_NE(section, std::string::npos) << r.out;
  const auto slave_lines = r.out.find(std::string("\n") + kCountersSlave + "\n", section);
  ASSERT_NE(slave_lines, std::string::npos) << r.out;
  const auto end = r.out.find("\n\n", slave_lines);
  EXPECT_NE(r.out.substr(slave_lines, end - slave_lines).find("Udp.RcvbufErrors"),
            std::string::npos)
      << r.out;
  // The bottleneck names the receiver's buffer on the slave, and nothing of the kind on the
  // master, whose namespace received nothing.
  bool named = false;
  for (const auto& b : doc.at("bottlenecks")) {
    EXPECT_FALSE(b.at("rule") == "udp_receive_buffer" && b.at("host") == "master") << b;
    named = named || (b.at("rule") == "udp_receive_buffer" && b.at("host") == kCountersSlave);
  }
  EXPECT_TRUE(named) << doc.at("bottlenecks");
  const auto verdict = r.out.find("Bottleneck (");
  ASSERT_NE(verdict, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(Udp.RcvbufErrors):", verdict), std::string::npos) << r.out;
}

}  // namespace
}  // namespace volley::test
