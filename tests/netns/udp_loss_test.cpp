// UDP loss counted at the receiver, against a known injected loss: inside a network namespace of
// its own, nftables drops 5% of the UDP datagrams that arrive (`numgen random mod 100 < 5`), and
// the receiving side's count must show 5% lost, within 1 percentage point, over the run and, as
// the slave reports it to the master interval by interval, in each interval (within 3 points: an
// interval holds ~2,000 datagrams). Needs root, `ip` and `nft`: skipped with a message otherwise.
#include <unistd.h>

#include <csignal>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string find_binary(std::initializer_list<const char*> paths) {
  for (const char* p : paths) {
    if (fs::exists(p)) return p;
  }
  return {};
}

/// Runs a command; "" when it succeeded, else what it printed.
std::string run(const std::vector<std::string>& args) {
  Process p(args);
  const ProcessResult r = p.wait(20s);
  if (r.exit_code == 0) return {};
  return fmt::format("{} failed ({}): {}", args.front(), r.exit_code, r.err);
}

/// A network namespace with only its loopback, deleted when the test ends.
class Namespace {
 public:
  Namespace(std::string ip, std::string name) : ip_(std::move(ip)), name_(std::move(name)) {}
  ~Namespace() { run({ip_, "netns", "delete", name_}); }
  Namespace(const Namespace&) = delete;
  Namespace& operator=(const Namespace&) = delete;
  [[nodiscard]] std::vector<std::string> exec(std::vector<std::string> args) const {
    std::vector<std::string> full{ip_, "netns", "exec", name_};
    full.insert(full.end(), args.begin(), args.end());
    return full;
  }

 private:
  std::string ip_;
  std::string name_;
};

TEST(UdpLoss, ReceiverCountsTheInjectedLossWithinOnePoint) {
  const std::string ip = find_binary({"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"});
  const std::string nft = find_binary({"/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft"});
  if (geteuid() != 0 || ip.empty() || nft.empty()) {
    GTEST_SKIP() << "needs root, ip and nft (nftables) to drop datagrams in a network namespace";
  }
  const std::string name = fmt::format("volley-udploss-{}", getpid());
  if (auto e = run({ip, "netns", "add", name}); !e.empty()) GTEST_SKIP() << e;
  Namespace ns(ip, name);
  ASSERT_EQ(run(ns.exec({ip, "link", "set", "lo", "up"})), "");
  ASSERT_EQ(run(ns.exec({nft, "add", "table", "inet", "t"})), "");
  ASSERT_EQ(run(ns.exec({nft, "add chain inet t in { type filter hook input priority 0; }"})), "");
  ASSERT_EQ(run(ns.exec({nft, "add rule inet t in meta l4proto udp numgen random mod 100 < 5 drop"})),
            "");

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
  Process slave(ns.exec({VOLLEY_BINARY, "serve", "--listen", "127.0.0.1:20000", "-q"}));
  std::this_thread::sleep_for(500ms);
  const fs::path json_path = dir.path() / "result.json";
  Process master(ns.exec({VOLLEY_BINARY, "run", profile.string(), "-P", "20000", "--set",
                          "h=127.0.0.1", "-i", "0.5", "--json", json_path.string(), "-q"}));
  const ProcessResult r = master.wait(60s);
  slave.signal(SIGTERM);
  slave.wait(10s);
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
