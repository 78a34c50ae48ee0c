#include "volley/report/bottleneck.hpp"

#include <gtest/gtest.h>

#include "report_fixture.hpp"
#include "volley/report/json_report.hpp"
#include "volley/report/text_report.hpp"

namespace volley::report {
namespace {

/// Kernel counters that moved by `moved` over 1 s (every other watched one by 0).
sampling::KernelCounterDeltas kernel(const std::map<std::string, std::uint64_t>& moved) {
  sampling::KernelSample before;
  sampling::KernelSample after;
  after.taken = before.taken + std::chrono::seconds(1);
  for (const auto& name : sampling::watched_protocol_counters()) {
    before.protocol.emplace(std::string(name), 1000);
    after.protocol.emplace(std::string(name), 1000);
  }
  for (const auto& [name, n] : moved) after.protocol[name] = 1000 + n;
  return sampling::kernel_counter_deltas(before, after);
}

/// Two CPUs, `busy` and `softirq` percent on cpu0, cpu1 idle.
sampling::CpuUsage cpu(double busy, double softirq) {
  sampling::CpuUsage u;
  u.wall_s = 1;
  sampling::CpuBreakdown c0;
  c0.busy_pct = busy;
  c0.softirq_pct = softirq;
  c0.idle_pct = 100 - busy;
  sampling::CpuBreakdown c1;
  c1.idle_pct = 100;
  u.per_cpu = {{0, c0}, {1, c1}};
  sampling::CpuBreakdown total;
  total.busy_pct = busy / 2;
  total.softirq_pct = softirq / 2;
  u.total = total;
  return u;
}

RunReport quiet_report() {
  RunReport r;
  r.master.host = "master";
  r.master.kernel = kernel({{"Tcp.OutSegs", 1'000'000}});
  r.master.cpu = cpu(40, 5);
  SideReport slave;
  slave.host = "198.18.0.2";
  slave.kernel = kernel({{"Tcp.OutSegs", 1'000'000}});
  slave.cpu = cpu(40, 5);
  r.slaves.push_back(slave);
  return r;
}

std::vector<BottleneckRule> rules(const std::vector<Bottleneck>& found) {
  std::vector<BottleneckRule> out;
  for (const auto& b : found) out.push_back(b.rule);
  return out;
}

TEST(Bottleneck, AQuietRunNamesNone) { EXPECT_TRUE(find_bottlenecks(quiet_report()).empty()); }

TEST(Bottleneck, EachRuleFiresAtItsThresholdAndNotBelow) {
  RunReport r = quiet_report();
  // 999 retransmits of 1,000,000 segments is under 0.1%; 1,000 is at it.
  r.master.kernel = kernel({{"Tcp.OutSegs", 1'000'000}, {"Tcp.RetransSegs", 999}});
  EXPECT_TRUE(find_bottlenecks(r).empty());
  r.master.kernel = kernel({{"Tcp.OutSegs", 1'000'000}, {"Tcp.RetransSegs", 1000}});
  EXPECT_EQ(rules(find_bottlenecks(r)), std::vector{BottleneckRule::kRetransmits});
  // A handful of retransmits in a short run is no finding, whatever its share.
  r.master.kernel = kernel({{"Tcp.OutSegs", 100}, {"Tcp.RetransSegs", 9}});
  EXPECT_TRUE(find_bottlenecks(r).empty());

  r = quiet_report();
  r.slaves[0].kernel = kernel({{"TcpExt.ListenOverflows", 512}, {"TcpExt.ListenDrops", 512}});
  auto found = find_bottlenecks(r);
  ASSERT_EQ(rules(found), std::vector{BottleneckRule::kListenOverflow});
  EXPECT_EQ(found[0].host, "198.18.0.2");
  EXPECT_NE(found[0].evidence.find("512"), std::string::npos) << found[0].evidence;
  EXPECT_NE(found[0].advice.find("somaxconn"), std::string::npos);

  r = quiet_report();
  r.slaves[0].kernel = kernel({{"Udp.InDatagrams", 96'900}, {"Udp.RcvbufErrors", 3'100}});
  found = find_bottlenecks(r);
  ASSERT_EQ(rules(found), std::vector{BottleneckRule::kUdpReceiveBuffer});
  EXPECT_NE(found[0].evidence.find("3.1%"), std::string::npos) << found[0].evidence;

  r = quiet_report();
  r.slaves[0].cpu = cpu(99, 62);
  found = find_bottlenecks(r);
  ASSERT_EQ(rules(found), std::vector{BottleneckRule::kSoftirqCpu});
  EXPECT_NE(found[0].evidence.find("CPU 0 was 99% busy, 62% in softirq"), std::string::npos)
      << found[0].evidence;
  r.slaves[0].cpu = cpu(99, 40);  // busy, but mostly not in softirq
  EXPECT_TRUE(find_bottlenecks(r).empty());

  r = quiet_report();
  r.master.cpu = cpu(100, 5);
  r.master.cpu->total->busy_pct = 97;
  EXPECT_EQ(rules(find_bottlenecks(r)), std::vector{BottleneckRule::kCpuFull});
  r.master.cpu->total->busy_pct = 94;
  EXPECT_TRUE(find_bottlenecks(r).empty());
}

/// A side with one group whose transaction of step 1 (timed) had `busy_us` of busy time, of it
/// `rwnd_us` held back by the window and `sndbuf_us` by the send buffer; step 0 (not timed)
/// had the same connections entirely window-limited.
void with_tcp(SideReport& side, std::uint64_t busy_us, std::uint64_t rwnd_us,
              std::uint64_t sndbuf_us) {
  results::GroupResult g;
  g.name = "group0";
  g.transactions.resize(2);
  g.transactions[0].name = "txn1";
  g.transactions[1].name = "txn2";
  stats::TcpReading early;
  early.rtt_us = 10;
  early.busy_us = 1'000'000;
  early.rwnd_limited_us = 1'000'000;
  g.transactions[0].stats.tcp.add(early);
  stats::TcpReading r;
  r.rtt_us = 10;
  r.busy_us = busy_us;
  r.rwnd_limited_us = rwnd_us;
  r.sndbuf_limited_us = sndbuf_us;
  g.transactions[1].stats.tcp.add(r);
  side.result.groups = {g};
}

TEST(Bottleneck, TheWindowAndTheSendBufferFireOnATimedTransactionAtTheirThresholds) {
  RunReport r = quiet_report();
  r.timed_steps = {1};
  with_tcp(r.master, 1'000'000, 490'000, 0);  // 49%: below; step 0's 100% is not timed
  EXPECT_TRUE(find_bottlenecks(r).empty());
  with_tcp(r.master, 1'000'000, 500'000, 0);
  auto found = find_bottlenecks(r);
  ASSERT_EQ(rules(found), std::vector{BottleneckRule::kReceiveWindow});
  EXPECT_EQ(found[0].host, "master");
  EXPECT_NE(found[0].evidence.find("group0/txn2 50%"), std::string::npos) << found[0].evidence;
  EXPECT_NE(found[0].advice.find("tcp_rmem"), std::string::npos);

  r = quiet_report();
  r.timed_steps = {1};
  with_tcp(r.slaves[0], 1'000'000, 0, 700'000);
  found = find_bottlenecks(r);
  ASSERT_EQ(rules(found), std::vector{BottleneckRule::kSendBuffer});
  EXPECT_EQ(found[0].host, "198.18.0.2");
  EXPECT_NE(found[0].advice.find("tcp_wmem"), std::string::npos);
  // Too little busy time to judge: a ping-pong's few microseconds.
  with_tcp(r.slaves[0], 99'000, 0, 99'000);
  EXPECT_TRUE(find_bottlenecks(r).empty());
}

TEST(Bottleneck, AMissingSlaveFiresNothing) {
  RunReport r = quiet_report();
  r.slaves[0].kernel = kernel({{"TcpExt.ListenOverflows", 512}});
  r.slaves[0].missing = "lost slave 198.18.0.2";
  EXPECT_TRUE(find_bottlenecks(r).empty());
}

TEST(Bottleneck, TheReportsSayIt) {
  RunReport r = testing::make_report();
  const std::string text = format_final_report(r);
  EXPECT_NE(text.find("Bottleneck"), std::string::npos) << text;
  const auto doc = to_json_document(r);
  ASSERT_TRUE(doc.contains("bottlenecks"));
  EXPECT_EQ(doc["bottlenecks"].size(), find_bottlenecks(r).size());
}

}  // namespace
}  // namespace volley::report
