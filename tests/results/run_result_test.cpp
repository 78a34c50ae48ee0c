// merge_into(): processes' shares of one plan add up to one result.
#include "volley/results/run_result.hpp"

#include <gtest/gtest.h>

namespace volley::results {
namespace {

RunResult share(std::uint64_t strands, std::uint64_t ops, std::uint64_t bytes,
                std::int64_t start_ns, std::int64_t elapsed_ns, std::uint64_t latency_ns,
                const std::string& process) {
  RunResult r;
  SlotStats stats;
  stats.counters.ops = ops;
  stats.counters.bytes_written = bytes;
  stats.latency.record(latency_ns);
  TxnResult txn{"t", stats, {}, {FlowopResult{"write", stats}}};
  r.groups.push_back(GroupResult{"g", strands, {txn}});
  r.windows.push_back(TxnWindow{start_ns, std::chrono::nanoseconds(elapsed_ns), true, strands});
  r.connections_requested = strands;
  r.connections_established = strands;
  r.error_samples.push_back({"g/t", process});
  r.processes.push_back(ProcessRecord{process, 1, strands, strands,
                                      1000 * static_cast<std::int64_t>(strands), 0.5, 0.25});
  return r;
}

TEST(RunResultMerge, CountsHistogramsStrandsAndProcessesAdd) {
  RunResult merged;
  merge_into(merged, share(3, 10, 640, 1000, 500, 2000, "a"));
  merge_into(merged, share(2, 5, 320, 900, 300, 9000, "b"));
  ASSERT_EQ(merged.groups.size(), 1U);
  EXPECT_EQ(merged.groups[0].strands, 5U);
  const auto& txn = merged.groups[0].transactions[0];
  EXPECT_EQ(txn.stats.counters.ops, 15U);
  EXPECT_EQ(txn.stats.counters.bytes_written, 960U);
  EXPECT_EQ(txn.stats.latency.count(), 2U);
  EXPECT_EQ(txn.flowops[0].stats.counters.ops, 15U);
  // The step's window runs from the first start (900) to the last end (1500).
  EXPECT_EQ(merged.windows[0].start_unix_ns, 900);
  EXPECT_EQ(merged.windows[0].elapsed.count(), 600);
  EXPECT_EQ(merged.windows[0].connections_read_exactly, 5U);  // each process's connections
  EXPECT_EQ(merged.connections_established, 5U);
  EXPECT_EQ(merged.error_samples.size(), 2U);
  ASSERT_EQ(merged.processes.size(), 2U);
  EXPECT_EQ(merged.processes[1].name, "b");
  EXPECT_DOUBLE_EQ(memory_per_connection(merged), 1000.0);
}

TEST(RunResultMerge, EachStrandsCountsAddUpByStrand) {
  // Two processes of one group of 3 strands: each counted its own strands, zeros for the other's.
  RunResult a = share(2, 10, 640, 0, 1, 1, "a");
  a.groups[0].strand_counts = {{4, 256, 2}, {0, 0, 0}, {6, 384, 3}};
  RunResult b = share(1, 5, 320, 0, 1, 1, "b");
  b.groups[0].strand_counts = {{0, 0, 0}, {5, 320, 1}, {0, 0, 0}};
  RunResult merged;
  merge_into(merged, a);
  merge_into(merged, b);
  EXPECT_EQ(merged.groups[0].strand_counts,
            (std::vector<StrandCounts>{{4, 256, 2}, {5, 320, 1}, {6, 384, 3}}));
  // Not counted: none.
  RunResult plain;
  merge_into(plain, share(1, 1, 1, 0, 1, 1, "a"));
  merge_into(plain, share(1, 1, 1, 0, 1, 1, "b"));
  EXPECT_TRUE(plain.groups[0].strand_counts.empty());
}

TEST(RunResultMerge, UncorrectedLatencyTcpAndUnstartedWindowsMerge) {
  RunResult a = share(1, 4, 64, 0, 0, 1000, "a");  // its step never started: start 0
  RunResult b = share(1, 6, 96, 2000, 400, 3000, "b");
  stats::LatencyHistogram uncorrected;
  uncorrected.record(std::uint64_t{500});
  b.groups[0].transactions[0].uncorrected_latency = uncorrected;
  stats::TcpReading reading;
  reading.rtt_us = 40;
  a.groups[0].transactions[0].stats.tcp.add(reading);
  b.groups[0].transactions[0].stats.tcp.add(reading);
  RunResult merged;
  merge_into(merged, a);
  merge_into(merged, b);
  const auto& txn = merged.groups[0].transactions[0];
  ASSERT_TRUE(txn.uncorrected_latency.has_value());
  EXPECT_EQ(txn.uncorrected_latency->count(), 1U);
  EXPECT_EQ(txn.stats.tcp.connections(), 2U);
  // A window that never started takes the other's start.
  EXPECT_EQ(merged.windows[0].start_unix_ns, 2000);
  EXPECT_EQ(merged.windows[0].elapsed.count(), 400);
  EXPECT_EQ(merged.processes.size(), 2U);
}

}  // namespace
}  // namespace volley::results
