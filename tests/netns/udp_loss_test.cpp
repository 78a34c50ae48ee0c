// UDP loss counted at the receiver, against a known injected loss: inside a network namespace of
// its own, nftables drops 5% of the UDP datagrams that arrive (`numgen random mod 100 < 5`), and
// the receiving side's count must show 5% lost, within 1 percentage point, over the run and, as
// the slave reports it to the master interval by interval, in each interval (within 3 points: an
// interval holds ~2,000 datagrams). Needs root, `ip` and `nft`: skipped with a message otherwise.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
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

TEST(UdpLoss, ReceiverCountsTheInjectedLossWithinOnePoint) {
#ifdef VOLLEY_SANITIZED
  // An instrumented receiver cannot keep up with 4000 datagrams/s on a loaded host (48% lost
  // under ThreadSanitizer once): the loss measured would be its own, not the injected 5%. The
  // normal build runs this test.
  GTEST_SKIP()
      << "the sanitizers slow the receiver below the datagram rate; runs in the normal build";
#endif
  if (!netns_unavailable().empty() || nft_binary().empty()) {
    GTEST_SKIP() << "needs root, ip and nft (nftables) to drop datagrams in a network namespace";
  }
  // A network namespace with only its loopback, deleted when the test ends.
  Namespaces namespaces({"volley-udploss"});
  const std::string& ns = namespaces[0];
  if (auto e = namespaces.create({{"-n", ns, "link", "set", "lo", "up"}}); !e.empty()) {
    GTEST_SKIP() << e;
  }
  ASSERT_EQ(nft_in(ns, {"add", "table", "inet", "t"}), "");
  ASSERT_EQ(nft_in(ns, {"add chain inet t in { type filter hook input priority 0; }"}), "");
  ASSERT_EQ(nft_in(ns, {"add rule inet t in meta l4proto udp numgen random mod 100 < 5 drop"}), "");

  TempDir dir;
  const fs::path profile = dir.path() / "udp_stream.xml";
  std::ofstream(profile) << R"(<?xml version="1.0"?>
<profile name="udp loss">
  <group nthreads="1">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=udp"/></transaction>
    <transaction duration="2s" rate="4000"><flowop type="write" options="size=200"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)";
  SlaveProcess slave(netns_exec(ns, {VOLLEY_BINARY, "serve", "--listen", "127.0.0.1:20000", "-q"}),
                     "127.0.0.1", 20000, ns);
  const fs::path json_path = dir.path() / "result.json";
  Process master(netns_exec(ns, {VOLLEY_BINARY, "run", profile.string(), "-P", "20000", "--set",
                                 "h=127.0.0.1", "-i", "0.5", "--json", json_path.string(), "-q"}));
  const ProcessResult r = master.wait(60s);
  slave.stop();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  const auto doc = nlohmann::json::parse(std::ifstream(json_path));
  const auto& sent = doc.at("groups")[0].at("transactions")[1].at("flowops")[0].at("datagrams");
  const auto& got =
      doc.at("slaves")[0].at("groups")[0].at("transactions")[1].at("flowops")[0].at("datagrams");
  const auto n_sent = sent.at("sent").get<double>();
  const auto n_received = got.at("received").get<double>();
  ASSERT_GT(n_sent, 1000.0);
  const double loss_pct = 100.0 * (n_sent - n_received) / n_sent;
  EXPECT_NEAR(loss_pct, 5.0, 1.0) << "sent " << n_sent << ", received " << n_received;
  // The receiver's own view (sequence gaps) agrees with the sender's count, within the tail.
  const auto gaps = got.at("lost").get<double>();
  EXPECT_NEAR(100.0 * gaps / n_sent, 5.0, 1.0);

  // Per interval, the slave's side beside the master's: each interval with enough datagrams
  // shows the injected loss, and the intervals' losses add up to the receiver's total.
  std::int64_t lost_in_intervals = 0;
  int full_intervals = 0;
  for (const auto& interval : doc.at("intervals")) {
    for (const auto& txn : interval.at("transactions")) {
      if (!txn.contains("udp")) continue;
      for (const auto& way : txn.at("udp")) {
        ASSERT_EQ(way.at("way"), "m->s");
        ASSERT_TRUE(way.contains("received")) << way.dump();
        lost_in_intervals += way.at("lost").get<std::int64_t>();
        if (way.at("received").get<double>() < 1000.0) continue;  // the ends: too few to judge
        ++full_intervals;
        EXPECT_NEAR(way.at("loss_pct").get<double>(), 5.0, 3.0) << interval.dump();
      }
    }
  }
  EXPECT_GE(full_intervals, 2);
  EXPECT_EQ(lost_in_intervals, got.at("lost").get<std::int64_t>());
}

}  // namespace
}  // namespace volley::test
