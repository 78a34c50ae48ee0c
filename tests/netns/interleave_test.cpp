// `volley sweep --interleave`: two settings compared in alternating rounds, each switched by the
// user's command, in a network namespace of the test's own so nothing outside it sees the
// change. Two settings, each under the workload it matters to:
// - TCP's buffer sizes (net.ipv4.tcp_rmem and tcp_wmem are per namespace), 4 KiB against the
//   usual ones, under a bulk stream: about 30 times slower with the small ones, so the direction
//   is certain and asserted;
// - RPS on the namespace's loopback (rps_cpus 0 against 3: both CPUs), under a 16-connection
//   ping-pong, the comparison of docs/tuning-comparison.md: on two cores, steering each packet's
//   processing to the other CPU halves the rate (-45% to -50%, sequential and interleaved), so
//   the verdict is "worse". Under the sanitizers, whose own cost dwarfs it, only the verdict's
//   presence and its p-value are checked.
// Needs root and `ip`: skipped with a message otherwise.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/netns.hpp"
#include "support/process.hpp"
#include "support/serve.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* kBulk = R"(<?xml version="1.0"?>
<profile name="bulk">
  <group nthreads="1">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp"/></transaction>
    <transaction duration="$d"><flowop type="write" options="size=64k"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)";

constexpr const char* kSmall = "4096 4096 4096";
constexpr const char* kUsualRead = "4096 131072 6291456";
constexpr const char* kUsualWrite = "4096 16384 4194304";
constexpr const char* kRpsFile = "/sys/class/net/lo/queues/rx-0/rps_cpus";

/// One setting compared: the workload, the commands that apply sides A and B (A first, the one
/// the namespace starts with), how to read the setting back, and what the comparison must show.
struct Setting {
  std::string name;
  std::string profile;
  std::string a;  ///< shell command applying A
  std::string b;  ///< shell command applying B
  std::vector<std::string> read_back;
  std::string a_read;        ///< what read_back prints under A
  std::string snapshot_key;  ///< the snapshot difference that names the setting
  std::string snapshot_a, snapshot_b;
  std::string rate_verdict;             ///< B's rate against A's, by the paired test
  bool verdict_when_sanitized = false;  ///< whether a sanitized build asserts it too
};

void PrintTo(const Setting& setting, std::ostream* out) { *out << setting.name; }

Setting buffers() {
  return {"buffers",
          kBulk,
          fmt::format("sysctl -qw net.ipv4.tcp_rmem='{0}' net.ipv4.tcp_wmem='{0}'", kSmall),
          fmt::format("sysctl -qw net.ipv4.tcp_rmem='{}' net.ipv4.tcp_wmem='{}'", kUsualRead,
                      kUsualWrite),
          {"cat", "/proc/sys/net/ipv4/tcp_rmem"},
          "4096\t4096\t4096\n",
          "sysctl.net.ipv4.tcp_rmem",
          kSmall,
          kUsualRead,
          "better",
          true};
}

Setting rps() {
  return {"rps",
          pingpong("16", "$d", "", "$h"),
          fmt::format("echo 0 > {}", kRpsFile),
          fmt::format("echo 3 > {}", kRpsFile),
          {"cat", kRpsFile},
          "0\n",
          "interfaces.lo.rps_cpus.rx-0",
          "0",
          "3",
          "worse",
          false};
}

std::string read_back(const std::string& ns, const Setting& setting) {
  Process p(netns_exec(ns, setting.read_back));
  const ProcessResult r = p.wait(10s);
  return r.exit_code == 0 ? r.out : "(unreadable)";
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// A namespace with its loopback up, or why not.
std::string make_namespace(Namespaces& namespaces) {
  if (auto why = netns_unavailable(); !why.empty()) return why;
  return namespaces.create({{"-n", namespaces[0], "link", "set", "lo", "up"}});
}

/// The interleaved sweep's arguments: sides A and B of `setting`, each logging its name.
std::vector<std::string> interleave_args(const std::string& ns, const TempDir& dir,
                                         const Setting& setting, const std::string& rounds,
                                         const std::string& duration) {
  const fs::path log = dir.path() / "commands.log";
  return netns_exec(
      ns, {VOLLEY_BINARY, "sweep", (dir.path() / "profile.xml").string(), "--local", "-n", rounds,
           "--set", "d=" + duration, "-q", "--json", (dir.path() / "r.json").string(),
           "--interleave", fmt::format("A={} && echo A >> {}", setting.a, log.string()),
           "--interleave", fmt::format("B={} && echo B >> {}", setting.b, log.string())});
}

class Interleave : public ::testing::TestWithParam<Setting> {};

TEST_P(Interleave, AlternatesTheSettingsJudgesByPairsAndRestoresTheFirst) {
  const Setting& setting = GetParam();
  Namespaces namespaces({"volley-ab-" + setting.name});
  if (auto why = make_namespace(namespaces); !why.empty()) GTEST_SKIP() << why;
  const std::string& ns = namespaces[0];
  TempDir dir;
  dir.write("profile.xml", setting.profile);
  // Five pairs: with three, a loaded machine's noise left RPS's 30% loss short of significance.
  Process sweep(interleave_args(ns, dir, setting, "5", "700ms"));
  const ProcessResult r = sweep.wait(120s);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  // ABBA order; a command runs only when the setting changes, and A's runs again at the end.
  const json doc = json::parse(read_file(dir.path() / "r.json"));
  const auto& interleave = doc.at("interleave");
  EXPECT_EQ(interleave.at("order"), json({"A", "B", "B", "A", "A", "B", "B", "A", "A", "B"}));
  EXPECT_EQ(read_file(dir.path() / "commands.log"), "A\nB\nA\nB\nA\nB\nA\n");
  EXPECT_EQ(read_back(ns, setting), setting.a_read);
  EXPECT_TRUE(interleave.at("restored").get<bool>());

  // Each side's snapshot was taken under its own setting: the difference names it.
  bool named = false;
  for (const auto& d : interleave.at("comparison").at("snapshot_differences")) {
    if (d.at("key") == setting.snapshot_key) {
      named = d.at("base") == setting.snapshot_a && d.at("new") == setting.snapshot_b;
    }
  }
  EXPECT_TRUE(named) << interleave.at("comparison").at("snapshot_differences").dump();

  // Both sides ran every round, and the rate is judged by the paired test with its p-value.
  const auto& points = doc.at("points");
  ASSERT_EQ(points.size(), 2U);
  EXPECT_EQ(points[0].at("runs").size(), 5U);
  EXPECT_EQ(points[1].at("runs").size(), 5U);
  const auto& metrics = interleave.at("comparison").at("points")[0].at("metrics");
  ASSERT_FALSE(metrics.empty());
  const auto& rate = metrics[0];
  ASSERT_EQ(rate.at("metric"), "transactions_per_s");
  EXPECT_TRUE(rate.at("paired").get<bool>());
  const double p = rate.at("p_value").get<double>();
  EXPECT_TRUE(p >= 0.0 && p <= 1.0) << rate.dump();
#ifdef VOLLEY_SANITIZED
  const bool judged = setting.verdict_when_sanitized;
#else
  const bool judged = true;
#endif
  if (judged) {
    EXPECT_EQ(rate.at("verdict"), setting.rate_verdict) << rate.dump();
  }
  EXPECT_NE(r.out.find("paired t-test"), std::string::npos) << r.out;
}

TEST_P(Interleave, CtrlCStopsTheComparisonAndRestoresTheFirstSetting) {
  const Setting& setting = GetParam();
  Namespaces namespaces({"volley-abint-" + setting.name});
  if (auto why = make_namespace(namespaces); !why.empty()) GTEST_SKIP() << why;
  const std::string& ns = namespaces[0];
  TempDir dir;
  dir.write("profile.xml", setting.profile);
  Process sweep(interleave_args(ns, dir, setting, "20", "1s"));
  // Into the second run (B's), a few seconds in: the setting is then B's.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (read_file(dir.path() / "commands.log") != "A\nB\n" &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(read_file(dir.path() / "commands.log"), "A\nB\n");
  std::this_thread::sleep_for(300ms);
  sweep.signal(SIGINT);
  const ProcessResult r = sweep.wait(30s);
  EXPECT_EQ(r.exit_code, 130) << r.out << r.err;
  EXPECT_EQ(read_file(dir.path() / "commands.log"), "A\nB\nA\n");
  EXPECT_EQ(read_back(ns, setting), setting.a_read);
  const json doc = json::parse(read_file(dir.path() / "r.json"));
  EXPECT_TRUE(doc.at("interleave").at("restored").get<bool>());
  EXPECT_NE(r.out.find("A's setting restored"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Setting, Interleave, ::testing::Values(buffers(), rps()),
                         [](const ::testing::TestParamInfo<Setting>& setting_info) {
                           return setting_info.param.name;
                         });

}  // namespace
}  // namespace volley::test
