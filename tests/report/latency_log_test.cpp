#include "volley/report/latency_log.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "report/report_fixture.hpp"

namespace volley::report {
namespace {

std::size_t nonzero_buckets(const results::RunResult& r) {
  std::size_t n = 0;
  for (const auto& g : r.groups) {
    for (const auto& t : g.transactions) {
      n += t.stats.latency.sparse_buckets().size();
      if (t.uncorrected_latency) n += t.uncorrected_latency->sparse_buckets().size();
      for (const auto& f : t.flowops) n += f.stats.latency.sparse_buckets().size();
    }
  }
  return n;
}

struct Parsed {
  std::vector<std::string> comments;
  std::string header;
  std::vector<std::string> rows;
};

Parsed parse(const std::string& text) {
  Parsed p;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("#")) {
      p.comments.push_back(line);
    } else if (p.header.empty()) {
      p.header = line;
    } else {
      p.rows.push_back(line);
    }
  }
  return p;
}

TEST(LatencyLog, OneRowPerNonEmptyBucket) {
  const RunReport r = testing::make_report();
  std::ostringstream out;
  write_latency_log(r, out);
  const Parsed p = parse(out.str());
  EXPECT_FALSE(p.comments.empty());
  EXPECT_EQ(p.header,
            "interval,side,host,group,transaction,flowop,bucket_lower_ns,bucket_upper_ns,count");
  const std::size_t expected =
      nonzero_buckets(r.master.result) + nonzero_buckets(r.slaves[0].result);
  EXPECT_GT(expected, 20u);
  EXPECT_EQ(p.rows.size(), expected);
}

TEST(LatencyLog, RowsNameTheirHistogram) {
  std::ostringstream out;
  write_latency_log(testing::make_report(), out);
  const std::string text = out.str();
  const std::uint32_t top = stats::LatencyHistogram::bucket_index(1'000'000);
  const std::string tail_row = "all,master,master,g0,rr,," +
                               std::to_string(stats::LatencyHistogram::bucket_lower(top)) + "," +
                               std::to_string(stats::LatencyHistogram::bucket_upper(top)) + ",10\n";
  EXPECT_NE(text.find(tail_row), std::string::npos) << tail_row;
  EXPECT_NE(text.find("all,master,master,g0,rr,uncorrected,"), std::string::npos);
  EXPECT_NE(text.find("all,master,master,g0,rr,1:read,"), std::string::npos);
  EXPECT_NE(text.find("all,slave,slave1,g1,stream,0:read,"), std::string::npos);
}

TEST(LatencyLog, EmptyReportHasOnlyTheHeader) {
  std::ostringstream out;
  write_latency_log(RunReport{}, out);
  const Parsed p = parse(out.str());
  EXPECT_EQ(p.header, kLatencyLogHeader);
  EXPECT_TRUE(p.rows.empty());
}

}  // namespace
}  // namespace volley::report

namespace volley::report {
namespace {

TEST(LatencyLog, IntervalRowsNameTheirIntervalAndSlot) {
  const RunReport r = testing::make_report();
  std::vector<results::SlotStats> slots(r.slot_names.size());
  slots[2] = testing::slot(10, 0, 0, 20'000);     // g0/rr
  slots[4] = testing::slot(10, 1024, 0, 12'000);  // g0/rr/read (flowop 1)
  slots[5] = testing::slot(10, 0, 0, 15'000);     // g0/rr/uncorrected
  std::ostringstream out;
  write_interval_histograms(r, 7, slots, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("7,master,master,g0,rr,,"), std::string::npos) << text;
  EXPECT_NE(text.find("7,master,master,g0,rr,1:read,"), std::string::npos) << text;
  EXPECT_NE(text.find("7,master,master,g0,rr,uncorrected,"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);  // one bucket each
}

}  // namespace
}  // namespace volley::report
