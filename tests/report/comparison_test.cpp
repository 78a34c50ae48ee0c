// Multi-slave comparison: the master against the sum of its slaves and each slave against its
// own share; missing slaves shown as missing; full host names in the text table.
#include "volley/report/comparison.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/report_fixture.hpp"
#include "volley/report/json_report.hpp"
#include "volley/report/text_report.hpp"

namespace volley::report {
namespace {

constexpr const char* kHostA = "slave-a.long-domain-name.example.com";
constexpr const char* kHostB = "slave-b.long-domain-name.example.com";

/// The exact mirror of the master's group `keep` (reads and writes swapped); the other group is
/// kept in place with no strands and no counters, as a slave serving only `keep` reports it.
results::RunResult mirror_of(const results::RunResult& master, std::size_t keep) {
  results::RunResult r = master;
  for (std::size_t g = 0; g < r.groups.size(); ++g) {
    for (auto& t : r.groups[g].transactions) {
      t.uncorrected_latency.reset();
      if (g != keep) t.stats = {};
      for (auto& f : t.flowops) {
        auto& c = f.stats.counters;
        std::swap(c.bytes_read, c.bytes_written);
        c.errors = {};
        c.expired = 0;
        if (g != keep) f.stats = {};
      }
    }
    if (g != keep) r.groups[g].strands = 0;
  }
  return r;
}

/// The fixture's master with g0 talking to host A and g1 to host B, and two exact mirrors.
RunReport two_slaves() {
  RunReport r = testing::make_report();
  for (auto& g : r.master.result.groups) {
    for (auto& t : g.transactions) {
      for (auto& f : t.flowops) f.stats.counters.errors = {};
    }
  }
  for (SlotName& n : r.slot_names) {
    if (n.flowop) n.host = n.group == 0 ? kHostA : kHostB;
  }
  r.slaves.clear();
  r.slaves.push_back({"slave", kHostA, mirror_of(r.master.result, 0), {}, {}, {}, nullptr, {}});
  r.slaves.push_back({"slave", kHostB, mirror_of(r.master.result, 1), {}, {}, {}, nullptr, {}});
  return r;
}

TEST(Comparison, TwoSlavesAddUpToTheMaster) {
  const RunReport r = two_slaves();
  const SideComparison sum = compare_master_with_slaves(r);
  EXPECT_EQ(sum.missing, "");
  EXPECT_EQ(sum.slave.bytes, sum.master.bytes);
  EXPECT_EQ(*sum.bytes_difference_pct, 0.0);
  EXPECT_EQ(*sum.ops_difference_pct, 0.0);
  // Each slave against its own share, not against the master's whole traffic (which showed a
  // correct run as 44% / 56% "difference").
  for (std::size_t i = 0; i < 2; ++i) {
    const SideComparison c = compare_with_master(r, i);
    EXPECT_EQ(*c.bytes_difference_pct, 0.0) << c.host;
    EXPECT_EQ(*c.ops_difference_pct, 0.0) << c.host;
    EXPECT_LT(c.master.bytes, sum.master.bytes) << c.host;
  }
}

TEST(Comparison, RunStatisticsShowFullHostNamesAndNoFalseDifference) {
  const std::string text = format_final_report(two_slaves());
  const std::string table = text.substr(text.find("Run Statistics"));
  EXPECT_NE(table.find(std::string("\n") + kHostA + " "), std::string::npos) << table;
  EXPECT_NE(table.find(std::string("\n") + kHostB + " "), std::string::npos) << table;
  EXPECT_NE(table.find("\nslaves (sum)"), std::string::npos) << table;
  EXPECT_NE(table.find(std::string("Diff(%) ") + kHostA), std::string::npos) << table;
  // Every difference row of a correct run reads 0.00% in all five columns.
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < table.size();) {
    const std::size_t nl = table.find('\n', at);
    lines.push_back(table.substr(at, nl - at));
    at = nl + 1;
  }
  int difference_rows = 0;
  for (const std::string& line : lines) {
    if (!line.starts_with("Diff")) continue;
    ++difference_rows;
    std::size_t zeros = 0;
    for (std::size_t at = line.find("0.00%"); at != std::string::npos;
         at = line.find("0.00%", at + 1))
      ++zeros;
    EXPECT_EQ(zeros, 5U) << line;
  }
  EXPECT_EQ(difference_rows, 3);  // the sum, then one per slave
  // Columns line up: the Time column ends at the same place in the header and every row.
  const std::size_t time_end = lines[1].find("Time") + 4;
  for (const std::string& line : lines) {
    if (line.starts_with(kHostA) || line.starts_with(kHostB) || line.starts_with("master") ||
        line.starts_with("slaves (sum)")) {
      ASSERT_GE(line.size(), time_end) << line;
      EXPECT_EQ(line[time_end - 1], 's') << line;
    }
  }
}

TEST(Comparison, MissingSlaveIsMissingNotZeros) {
  RunReport r = two_slaves();
  r.slaves[1].result = {};
  r.slaves[1].missing = "lost slave x: connection reset";
  const SideComparison c = compare_with_master(r, 1);
  EXPECT_FALSE(c.bytes_difference_pct.has_value());
  EXPECT_FALSE(compare_master_with_slaves(r).bytes_difference_pct.has_value());
  const std::string text = format_final_report(r);
  const std::size_t row = text.find(std::string("\n") + kHostB + " ");
  ASSERT_NE(row, std::string::npos) << text;
  const std::string line = text.substr(row + 1, text.find('\n', row + 1) - row - 1);
  EXPECT_TRUE(line.ends_with(" missing: lost slave x: connection reset")) << line;
  EXPECT_EQ(text.find("100.00%"), std::string::npos) << text;
  const nlohmann::json doc = to_json_document(r);
  EXPECT_EQ(doc["slaves"][1]["missing"], "lost slave x: connection reset");
  EXPECT_TRUE(doc["slaves"][1]["totals"].is_null());
  EXPECT_TRUE(doc["slaves"][0]["missing"].is_null());
  EXPECT_TRUE(doc["comparison"][1]["bytes_difference_pct"].is_null());
  EXPECT_TRUE(doc["comparison"][1]["slave_bytes"].is_null());
  EXPECT_TRUE(doc["comparison_sum"]["bytes_difference_pct"].is_null());
  EXPECT_EQ(doc["comparison_sum"]["missing"], std::string("no results from ") + kHostB);
}

}  // namespace
}  // namespace volley::report
