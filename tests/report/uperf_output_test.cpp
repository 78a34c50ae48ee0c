#include "volley/report/uperf_output.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "report/report_fixture.hpp"

namespace volley::report {
namespace {

std::vector<std::string> lines_named(const std::string& text, const std::string& name) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(" name:" + name + " ") != std::string::npos) out.push_back(line);
  }
  return out;
}

TEST(UperfOutput, RawLineIsUperfsExactly) {
  EXPECT_EQ(format_uperf_raw_line(1'795'262'520'188'860'849, "Txn2", 17259648, 269682),
            "timestamp_ms:1795262520188.8608 name:Txn2 nr_bytes:17259648 nr_ops:269682\n");
  EXPECT_EQ(format_uperf_raw_line(1'000'000'000'000'000'001, "Total", 0, 0),
            "timestamp_ms:1000000000000.0000 name:Total nr_bytes:0 nr_ops:0\n");
}

TEST(UperfOutput, StartLineNamesTheProfileAsUperfPrintsIt) {
  EXPECT_EQ(format_uperf_start("TCP PingPong", 4, 0) + format_uperf_setup_time(0.123),
            "Starting 4 threads running profile:tcp pingpong ...   0.12 seconds\n");
  EXPECT_EQ(format_uperf_start("x", 0, 2), "Starting 2 processes running profile:x ... ");
  EXPECT_EQ(format_uperf_start("x", 1, 2),
            "Starting 1 threads, 2 processes running profile:x ... ");
}

TEST(UperfOutput, SectionsFollowUperfsLetters) {
  const UperfSections plain = uperf_sections("");
  EXPECT_FALSE(plain.raw);
  EXPECT_TRUE(plain.stats && plain.netstat && plain.run_statistics);
  EXPECT_FALSE(plain.groups || plain.strands || plain.transactions || plain.flowops);
  const UperfSections all = uperf_sections("vaR");
  EXPECT_TRUE(all.raw && all.stats && all.groups && all.strands && all.transactions &&
              all.flowops && all.netstat && all.run_statistics);
  EXPECT_TRUE(uperf_sections("p").flowops);  // -p, -e, -E assume -f
  // -n clears what came before; what follows is added, but interval lines stay off.
  const UperfSections none = uperf_sections("aRn");
  EXPECT_FALSE(none.raw || none.stats || none.groups || none.run_statistics);
  const UperfSections after = uperf_sections("nRg");
  EXPECT_TRUE(after.raw && after.groups);
  EXPECT_FALSE(after.stats || after.run_statistics);
}

TEST(UperfOutput, RunStatisticsInUperfsColumnsOverTheWholeRun) {
  const RunReport report = testing::make_report();
  const std::string out = format_uperf_report(report, uperf_sections("R"));
  const std::string header =
      "\nRun Statistics\n"
      "Hostname            Time       Data   Throughput   Operations      Errors\n" +
      std::string(79, '-') + "\n";
  const auto at = out.find(header);
  ASSERT_NE(at, std::string::npos) << out;
  std::istringstream rows(out.substr(at + header.size()));
  std::string slave;
  std::string master;
  std::string rule;
  std::string difference;
  std::getline(rows, slave);
  std::getline(rows, master);
  std::getline(rows, rule);
  std::getline(rows, difference);
  // 6.5 s (every step), 34,816,000 bytes, 2509 flowop executions, 2 errors = 0.08 %.
  EXPECT_EQ(master, "master             6.50s    33.20MB    42.85Mb/s         2509        0.08");
  EXPECT_EQ(slave.substr(0, 16), "slave1          ");
  EXPECT_EQ(difference.substr(0, 16), "Difference(%)   ");
  EXPECT_EQ(difference.back(), '%');
}

TEST(UperfOutput, AllSectionsInUperfsOrder) {
  const std::string out = format_uperf_report(testing::make_report(), uperf_sections("aR"));
  const std::vector<std::string> headings{"\nGroup Details\n",
                                          "\nStrand Details\n",
                                          "\nTxn                Count         avg",
                                          "\nFlowop             Count         avg",
                                          "\nNetstat statistics for this run\n",
                                          "\nRun Statistics\n"};
  std::size_t from = 0;
  for (const std::string& h : headings) {
    const auto at = out.find(h, from);
    ASSERT_NE(at, std::string::npos) << h << "\n" << out;
    from = at + h.size();
  }
  // Groups keep uperf's raw form and names; transactions are numbered from 0 in the table.
  EXPECT_EQ(lines_named(out, "g0").size(), 1U) << out;
  EXPECT_NE(out.find("\nTxn0                   4 "), std::string::npos) << out;
  EXPECT_NE(out.find("\nTxn1                1000 "), std::string::npos) << out;
  EXPECT_NE(out.find("\nwrite               1000 "), std::string::npos) << out;
  EXPECT_NE(out.find("\neth0         1600        1000    16.00Mb/s     8.00Mb/s \n"),
            std::string::npos)
      << out;
}

TEST(UperfOutput, StrandDetailsHaveALinePerStrandNamedAsUperfsThreads) {
  RunReport report = testing::make_report();
  auto& groups = report.master.result.groups;
  const std::uint64_t kKiB = testing::kKiB;
  groups[0].strand_counts = {{250, 512 * kKiB, 250}, {250, 512 * kKiB, 250}, {0, 0, 0}, {9, 9, 1}};
  groups[1].strand_counts = {{501, 500 * 64 * kKiB, 501}};
  const std::string out = format_uperf_report(report, uperf_sections("TR"));
  const std::string heading = "\nStrand Details\n" + uperf_rule();
  const auto at = out.find(heading);
  ASSERT_NE(at, std::string::npos) << out;
  // Thr0.. within each group, as uperf numbers each group's threads; stamped with the run's end.
  const std::int64_t end = uperf_run_end_ns(report);
  EXPECT_EQ(out.substr(at + heading.size(),
                       out.find("\n\n", at + heading.size()) - at - heading.size() + 1),
            format_uperf_raw_line(end, "Thr0", 512 * kKiB, 250) +
                format_uperf_raw_line(end, "Thr1", 512 * kKiB, 250) +
                format_uperf_raw_line(end, "Thr2", 0, 0) +
                format_uperf_raw_line(end, "Thr3", 9, 9) +
                format_uperf_raw_line(end, "Thr0", 500 * 64 * kKiB, 501));
}

/// The whitespace-separated fields of the first line of `text` that starts with `prefix`.
std::vector<std::string> row_fields(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(prefix)) continue;
    std::istringstream fields(line);
    std::vector<std::string> out;
    for (std::string f; fields >> f;) out.push_back(f);
    return out;
  }
  return {};
}

TEST(UperfOutput, CpuColumnIsTheStepsCpuPerExecution) {
  RunReport report = testing::make_report();
  // Step 1 took 2.5 CPU seconds of the master's process for its 2500 flowop executions (g0's
  // 1000 writes and 1000 reads, g1's 500 writes); step 0's CPU is unknown.
  report.master_steps = {{}, {0, 0, 2.5}, {0, 0, 0.0}};
  const std::string out = format_uperf_report(report, uperf_sections("tfR"));
  // Columns: name, count, avg, cpu, max, min. Each flowop of the step: 1 ms an execution.
  EXPECT_EQ(row_fields(out, "write               1000 ").at(3), "1.00ms") << out;
  EXPECT_EQ(row_fields(out, "read                1000 ").at(3), "1.00ms") << out;
  EXPECT_EQ(row_fields(out, "write                500 ").at(3), "1.00ms") << out;
  EXPECT_EQ(row_fields(out, "connect                4 ").at(3), "-") << out;
  // A transaction: its flowops' share per iteration (g0's rr: 2 executions an iteration).
  EXPECT_EQ(row_fields(out, "Txn1                1000 ").at(3), "2.00ms") << out;
  EXPECT_EQ(row_fields(out, "Txn1                 500 ").at(3), "1.00ms") << out;
  EXPECT_EQ(row_fields(out, "Txn0                   4 ").at(3), "-") << out;
  // A step whose CPU time did not move (getrusage counts in its own ticks): zero, not missing.
  EXPECT_EQ(row_fields(out, "Txn2                   4 ").at(3), "0.00ns") << out;
}

TEST(UperfOutput, NoStatisticsPrintsNothing) {
  EXPECT_EQ(format_uperf_report(testing::make_report(), uperf_sections("nR")), "");
}

}  // namespace
}  // namespace volley::report
