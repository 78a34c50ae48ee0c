// merge_into(): processes' shares of one plan add up to one result.
#include "volley/engine/run_result.hpp"

#include <gtest/gtest.h>

namespace volley::engine {
namespace {

RunResult share(std::uint64_t strands, std::uint64_t ops, std::uint64_t bytes, std::int64_t start_ns,
                std::int64_t elapsed_ns, std::uint64_t latency_ns, const std::string& process) {
  RunResult r;
  SlotStats stats;
  stats.counters.ops = ops;
  stats.counters.bytes_written = bytes;
  stats.latency.record(latency_ns);
  TxnResult txn{"t", stats, {}, {FlowopResult{"write", stats}}};
  r.groups.push_back(GroupResult{"g", strands, {txn}});
  r.windows.push_back(TxnWindow{start_ns, std::chrono::nanoseconds(elapsed_ns), true});
  r.connections_requested = strands;
  r.connections_established = strands;
  r.error_samples.push_back({"g/t", process});
  r.processes.push_back(ProcessRecord{process, 1, strands, strands, 1000 * static_cast<std::int64_t>(strands), 0.5, 0.25});
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
  EXPECT_EQ(merged.connections_established, 5U);
  EXPECT_EQ(merged.error_samples.size(), 2U);
  ASSERT_EQ(merged.processes.size(), 2U);
  EXPECT_EQ(merged.processes[1].name, "b");
  EXPECT_DOUBLE_EQ(memory_per_connection(merged), 1000.0);
}

TEST(RunResultMerge, ResidentBytesAreThisProcesssMemory) {
  EXPECT_GT(resident_bytes(), 0);
}

}  // namespace
}  // namespace volley::engine
