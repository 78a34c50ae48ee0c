// `volley sweep --interleave`: two settings compared in alternating rounds, each switched by the
// user's command. The setting here is TCP's buffer sizes in a network namespace of the test's own
// (net.ipv4.tcp_rmem and tcp_wmem are per namespace): 4 KiB buffers against the usual ones. A
// bulk stream over loopback runs about 30 times slower with the small ones, and nothing outside
// the namespace sees the change. Needs root and `ip`: skipped with a message otherwise.
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

/// net.ipv4.tcp_rmem in `ns`, as the kernel prints it (tabs between the numbers).
std::string tcp_rmem(const std::string& ns) {
  Process p(netns_exec(ns, {"cat", "/proc/sys/net/ipv4/tcp_rmem"}));
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

/// The interleaved sweep's arguments: sides A (small buffers) and B (the usual ones), each
/// logging its name.
std::vector<std::string> interleave_args(const std::string& ns, const TempDir& dir,
                                         const std::string& rounds, const std::string& duration) {
  const fs::path log = dir.path() / "commands.log";
  return netns_exec(
      ns, {VOLLEY_BINARY, "sweep", (dir.path() / "bulk.xml").string(), "--local", "-n", rounds,
           "--set", "d=" + duration, "-q", "--json", (dir.path() / "r.json").string(),
           "--interleave",
           fmt::format("A=sysctl -qw net.ipv4.tcp_rmem='{0}' net.ipv4.tcp_wmem='{0}' && echo A >> {1}",
                       kSmall, log.string()),
           "--interleave",
           fmt::format("B=sysctl -qw net.ipv4.tcp_rmem='{}' net.ipv4.tcp_wmem='{}' && echo B >> {}",
                       kUsualRead, kUsualWrite, log.string())});
}

TEST(Interleave, AlternatesTheSettingsJudgesByPairsAndRestoresTheFirst) {
  Namespaces namespaces({"volley-ab"});
  if (auto why = make_namespace(namespaces); !why.empty()) GTEST_SKIP() << why;
  const std::string& ns = namespaces[0];
  TempDir dir;
  dir.write("bulk.xml", kBulk);
  Process sweep(interleave_args(ns, dir, "3", "700ms"));
  const ProcessResult r = sweep.wait(120s);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;

  // ABBA order; a command runs only when the setting changes, and A's runs again at the end.
  const json doc = json::parse(read_file(dir.path() / "r.json"));
  const auto& interleave = doc.at("interleave");
  EXPECT_EQ(interleave.at("order"), json({"A", "B", "B", "A", "A", "B"}));
  EXPECT_EQ(read_file(dir.path() / "commands.log"), "A\nB\nA\nB\nA\n");
  EXPECT_EQ(tcp_rmem(ns), "4096\t4096\t4096\n");
  EXPECT_TRUE(interleave.at("restored").get<bool>());

  // Each side's snapshot was taken under its own setting: the difference names the buffers.
  bool buffers_differ = false;
  for (const auto& d : interleave.at("comparison").at("snapshot_differences")) {
    if (d.at("key") == "sysctl.net.ipv4.tcp_rmem") {
      buffers_differ = d.at("base") == kSmall && d.at("new") == kUsualRead;
    }
  }
  EXPECT_TRUE(buffers_differ) << interleave.at("comparison").at("snapshot_differences").dump();

  // The usual buffers move the stream faster in every round: better, by the paired test.
  const auto& points = doc.at("points");
  ASSERT_EQ(points.size(), 2U);
  EXPECT_EQ(points[0].at("runs").size(), 3U);
  EXPECT_EQ(points[1].at("runs").size(), 3U);
  const auto& metrics = interleave.at("comparison").at("points")[0].at("metrics");
  ASSERT_FALSE(metrics.empty());
  const auto& rate = metrics[0];
  ASSERT_EQ(rate.at("metric"), "transactions_per_s");
  EXPECT_TRUE(rate.at("paired").get<bool>());
  EXPECT_GT(rate.at("change_pct").get<double>(), 0.0) << rate.dump();
  EXPECT_EQ(rate.at("verdict"), "better") << rate.dump();
  EXPECT_NE(r.out.find("paired t-test"), std::string::npos) << r.out;
}

TEST(Interleave, CtrlCStopsTheComparisonAndRestoresTheFirstSetting) {
  Namespaces namespaces({"volley-abint"});
  if (auto why = make_namespace(namespaces); !why.empty()) GTEST_SKIP() << why;
  const std::string& ns = namespaces[0];
  TempDir dir;
  dir.write("bulk.xml", kBulk);
  Process sweep(interleave_args(ns, dir, "20", "1s"));
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
  EXPECT_EQ(tcp_rmem(ns), "4096\t4096\t4096\n");
  const json doc = json::parse(read_file(dir.path() / "r.json"));
  EXPECT_TRUE(doc.at("interleave").at("restored").get<bool>());
  EXPECT_NE(r.out.find("A's setting restored"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace volley::test
