// The TCP figures and the window rule provoked for real: in a network namespace of the test's own
// whose TCP receive buffers are 4 KiB (net.ipv4.tcp_rmem is per namespace), the master reads a
// stream at a fixed pace (rate=, which the slave's mirror does not keep: it writes as fast as the
// window lets it). The slave's connections spend nearly all their busy time held back by the
// master's full window, and the report says so: each side's `tcp` for the timed transaction, and
// the `receive_window` finding on the slave. Needs root and `ip`: skipped with a message
// otherwise.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/netns.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* kWindowBulk = R"(<?xml version="1.0"?>
<profile name="bulk">
  <group nthreads="2">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp"/></transaction>
    <transaction duration="700ms" rate="100"><flowop type="read" options="size=16k"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)";

TEST(TcpWindow, ASmallReceiveBufferIsNamedFromEachConnectionsTcpInfo) {
  if (auto why = netns_unavailable(); !why.empty()) GTEST_SKIP() << why;
  Namespaces namespaces({"volley-rwnd"});
  const std::string& ns = namespaces[0];
  if (auto e = namespaces.create({{"-n", ns, "link", "set", "lo", "up"}}); !e.empty()) {
    GTEST_SKIP() << e;
  }
  Process set(netns_exec(ns, {"sysctl", "-qw", "net.ipv4.tcp_rmem=4096 4096 4096"}));
  ASSERT_EQ(set.wait(20s).exit_code, 0);
  TempDir dir;
  const fs::path profile = dir.path() / "bulk.xml";
  std::ofstream(profile) << kWindowBulk;
  const fs::path out = dir.path() / "r.json";
  Process run(netns_exec(
      ns, {VOLLEY_BINARY, "run", profile.string(), "--local", "--json", out.string(), "-q"}));
  const ProcessResult r = run.wait(60s);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json doc = json::parse(std::ifstream(out));

  // Both sides read both connections when the stream's step ended.
  const json& received = doc.at("groups")[0].at("transactions")[1].at("tcp");
  const json& sent = doc.at("slaves")[0].at("groups")[0].at("transactions")[1].at("tcp");
  EXPECT_EQ(sent.at("connections"), 2);
  EXPECT_EQ(received.at("connections"), 2);
  EXPECT_GT(sent.at("rtt_us").at("median").get<double>(), 0.0);
  EXPECT_LE(received.at("rcv_space").at("max").get<std::uint64_t>(), 4096U * 2);
  EXPECT_GE(sent.at("rwnd_limited_pct").get<double>(), 50.0) << sent.dump();
  EXPECT_LT(received.at("rwnd_limited_pct").get<double>(), 50.0) << received.dump();

  bool named = false;
  for (const json& b : doc.at("bottlenecks")) {
    EXPECT_FALSE(b.at("rule") == "receive_window" && b.at("host") == "master") << b.dump();
    named = named || (b.at("rule") == "receive_window" && b.at("host") == "127.0.0.1");
  }
  EXPECT_TRUE(named) << doc.at("bottlenecks").dump();
  EXPECT_NE(r.out.find("TCP at each transaction's end"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace volley::test
