// The kernel counters over an interval (kernel_counter_deltas.cpp) and their JSON form.
#include "volley/sampling/kernel_counters.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/temp_dir.hpp"

namespace volley::sampling {
namespace {

using namespace std::chrono_literals;

// Every watched counter at `value`, but for those named in `without`.
KernelSample sample_at(std::uint64_t value, std::chrono::steady_clock::time_point t,
                       std::vector<std::string_view> without = {}) {
  KernelSample s;
  s.taken = t;
  for (const auto name : watched_protocol_counters()) {
    if (std::find(without.begin(), without.end(), name) == without.end()) {
      s.protocol.emplace(std::string(name), value);
    }
  }
  return s;
}

TEST(KernelCounterDeltas, DeltasOfTheWatchedCounters) {
  const auto t0 = std::chrono::steady_clock::now();
  KernelSample before = sample_at(10, t0);
  KernelSample after = sample_at(10, t0 + 2s);
  before.protocol["Tcp.InSegs"] = 1;  // not watched: not reported
  after.protocol["Tcp.InSegs"] = 1000;
  after.protocol["TcpExt.ListenOverflows"] = 25;
  const auto d = kernel_counter_deltas(before, after);
  EXPECT_DOUBLE_EQ(d.wall_s, 2.0);
  EXPECT_EQ(d.counters.size(), watched_protocol_counters().size());
  EXPECT_EQ(d.counters.at("TcpExt.ListenOverflows"), 15u);
  EXPECT_EQ(d.counters.at("Udp.RcvbufErrors"), 0u);  // did not move: still reported
  EXPECT_FALSE(d.counters.contains("Tcp.InSegs"));
  EXPECT_TRUE(d.absent.empty());
  EXPECT_TRUE(d.went_backwards.empty());
  EXPECT_FALSE(d.softnet.has_value());
}

TEST(KernelCounterDeltas, AbsentInEitherSampleIsAbsent) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto d = kernel_counter_deltas(sample_at(1, t0, {"TcpExt.TCPZeroWindowDrop"}),
                                       sample_at(2, t0, {"Udp.NoPorts"}));
  EXPECT_EQ(d.absent, (std::vector<std::string>{"TcpExt.TCPZeroWindowDrop", "Udp.NoPorts"}));
  EXPECT_FALSE(d.counters.contains("Udp.NoPorts"));
  EXPECT_EQ(d.counters.at("Tcp.RetransSegs"), 1u);
}

TEST(KernelCounterDeltas, ACounterThatWentBackwardsHasNoDelta) {
  const auto t0 = std::chrono::steady_clock::now();
  KernelSample before = sample_at(5, t0);
  KernelSample after = sample_at(5, t0);
  before.protocol["Tcp.RetransSegs"] = 0xFFFFFFF0;  // a 32-bit counter about to wrap
  after.protocol["Tcp.RetransSegs"] = 0x10;
  const auto d = kernel_counter_deltas(before, after);
  EXPECT_EQ(d.went_backwards, (std::vector<std::string>{"Tcp.RetransSegs"}));
  EXPECT_FALSE(d.counters.contains("Tcp.RetransSegs"));
}

TEST(KernelCounterDeltas, SoftnetWrapsAt32BitsPerCpu) {
  const auto t0 = std::chrono::steady_clock::now();
  KernelSample before = sample_at(0, t0);
  KernelSample after = sample_at(0, t0 + 1s);
  before.softnet = std::vector<SoftnetCpu>{{0, 0xFFFFFFF0u, 1, 2}, {2, 5, 0, 0}, {3, 1, 1, 1}};
  after.softnet = std::vector<SoftnetCpu>{{2, 9, 0, 1}, {0, 0x10, 1, 7}, {5, 1, 1, 1}};
  const auto d = kernel_counter_deltas(before, after);
  ASSERT_TRUE(d.softnet.has_value());
  ASSERT_EQ(d.softnet->size(), 2u);  // CPUs 3 and 5 are in one sample only
  EXPECT_EQ((*d.softnet)[0], (SoftnetDelta{0, 0x20, 0, 5}));
  EXPECT_EQ((*d.softnet)[1], (SoftnetDelta{2, 4, 0, 1}));
  EXPECT_EQ(softnet_total(*d.softnet), (SoftnetDelta{0, 0x24, 0, 6}));
}

TEST(KernelCounterDeltas, ProblemsOfBothSamplesOnce) {
  const auto t0 = std::chrono::steady_clock::now();
  KernelSample before = sample_at(0, t0);
  KernelSample after = sample_at(0, t0 - 1s);  // a clock that went back: no negative time
  before.problems = {"proc/net/softnet_stat: unreadable"};
  after.problems = {"proc/net/softnet_stat: unreadable", "proc/net/netstat: unreadable"};
  const auto d = kernel_counter_deltas(before, after);
  EXPECT_EQ(d.wall_s, 0.0);
  EXPECT_EQ(d.problems, (std::vector<std::string>{"proc/net/softnet_stat: unreadable",
                                                  "proc/net/netstat: unreadable"}));
}

TEST(KernelCounterDeltas, JsonForm) {
  const auto t0 = std::chrono::steady_clock::now();
  KernelSample before = sample_at(1, t0, {"Udp.NoPorts"});
  KernelSample after = sample_at(3, t0 + 1s, {"Udp.NoPorts"});
  before.softnet = std::vector<SoftnetCpu>{{0, 1, 0, 0}, {1, 1, 0, 0}};
  after.softnet = std::vector<SoftnetCpu>{{0, 4, 0, 0}, {1, 3, 2, 0}};
  const nlohmann::json j = kernel_counter_deltas(before, after);
  EXPECT_EQ(j["counters"]["Tcp.RetransSegs"], 2);
  EXPECT_EQ(j["absent"], nlohmann::json::array({"Udp.NoPorts"}));
  EXPECT_TRUE(j["went_backwards"].empty());
  EXPECT_EQ(j["softnet"]["processed"], 5);
  EXPECT_EQ(j["softnet"]["dropped"], 2);
  EXPECT_EQ(j["softnet"]["per_cpu"][1],
            (nlohmann::json{{"cpu", 1}, {"processed", 2}, {"dropped", 2}, {"time_squeeze", 0}}));
  EXPECT_TRUE(j["problems"].empty());
  EXPECT_EQ(j.size(), 6u);
}

TEST(KernelCounterWindow, FinishOnlyAfterStartAndOnce) {
  KernelCounterWindow window;
  window.finish();
  EXPECT_FALSE(window.deltas().has_value());
  window.start();
  EXPECT_TRUE(window.started());
  window.finish();
  ASSERT_TRUE(window.deltas().has_value());
  const double first = window.deltas()->wall_s;
  window.finish();
  EXPECT_EQ(window.deltas()->wall_s, first);
}

// What an interval keeps: the counters that moved, and softnet_stat's totals under their names.
TEST(MovedCounters, OnlyWhatMovedWithSoftnetTotals) {
  const auto t0 = std::chrono::steady_clock::now();
  KernelSample before = sample_at(10, t0);
  KernelSample after = sample_at(10, t0 + 1s);
  after.protocol["Tcp.RetransSegs"] = 13;
  before.softnet = std::vector<SoftnetCpu>{{0, 100, 0, 1}, {1, 50, 0, 0}};
  after.softnet = std::vector<SoftnetCpu>{{0, 160, 0, 3}, {1, 90, 0, 0}};
  EXPECT_EQ(moved_counters(kernel_counter_deltas(before, after)),
            (ProtocolCounterMap{
                {"Tcp.RetransSegs", 3}, {"softnet.processed", 100}, {"softnet.time_squeeze", 2}}));
  EXPECT_TRUE(moved_counters(kernel_counter_deltas(before, before)).empty());
}

// A series of a fake host: each next() is what moved since the one before.
TEST(KernelCounterSeries, EachIntervalIsWhatMovedSinceThePrevious) {
  test::TempDir root;
  auto write = [&root](std::uint64_t retrans) {
    root.write("proc/net/snmp",
               fmt::format("Tcp: OutSegs RetransSegs\nTcp: {} {}\n", retrans * 10, retrans));
  };
  write(5);
  KernelCounterSeries series(root.path());
  write(7);
  EXPECT_EQ(series.next(), (ProtocolCounterMap{{"Tcp.OutSegs", 20}, {"Tcp.RetransSegs", 2}}));
  EXPECT_TRUE(series.next().empty());
  write(8);
  EXPECT_EQ(series.next(), (ProtocolCounterMap{{"Tcp.OutSegs", 10}, {"Tcp.RetransSegs", 1}}));
}

}  // namespace
}  // namespace volley::sampling
