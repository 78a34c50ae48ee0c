#include "volley/report/csv_report.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "report/report_fixture.hpp"

namespace volley::report {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> fields_of(const std::string& line) {
  // Every field, the empty last one too (getline would drop it).
  std::vector<std::string> fields(1);
  for (const char c : line) {
    if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

TEST(CsvField, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(csv_field("txn2"), "txn2");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field(" padded"), "\" padded\"");
  EXPECT_EQ(csv_field(""), "");
}

TEST(IntervalCsv, HeaderAndRows) {
  std::ostringstream out;
  write_interval_csv(testing::make_report(), out);
  const auto lines = lines_of(out.str());
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0],
            "start_unix_ns,t_s,length_s,step,group,transaction,transactions,transactions_per_s,"
            "ops,ops_per_s,bytes,bits_per_s,errors,p50_ns,p99_ns,udp_sent,udp_received,udp_lost,"
            "udp_late,udp_duplicates,udp_timeouts,udp_jitter_ns,slave_udp_sent,slave_udp_received,"
            "slave_udp_lost,slave_udp_late,slave_udp_duplicates,slave_udp_timeouts,"
            "slave_udp_jitter_ns");
  // Interval 1: g0/rr and g1/stream; interval 2: g0/rr (stalled) and g1/stream; interval 3:
  // g0/disconnect.
  ASSERT_EQ(lines.size(), 1u + 5u);
  const auto f = fields_of(lines[1]);
  ASSERT_EQ(f.size(), 29u);
  EXPECT_EQ(f[0], std::to_string(testing::kStartUnixNs + 1'000'000'000));
  EXPECT_DOUBLE_EQ(std::stod(f[1]), 1.0);
  EXPECT_DOUBLE_EQ(std::stod(f[2]), 1.0);
  EXPECT_EQ(f[3], "1");
  EXPECT_EQ(f[4], "g0");
  EXPECT_EQ(f[5], "rr");
  EXPECT_EQ(f[6], "200");
  EXPECT_DOUBLE_EQ(std::stod(f[7]), 200.0);
  EXPECT_EQ(f[8], "400");
  EXPECT_DOUBLE_EQ(std::stod(f[9]), 400.0);
  EXPECT_EQ(f[10], "409600");
  EXPECT_DOUBLE_EQ(std::stod(f[11]), 8.0 * 409600);
  EXPECT_EQ(f[12], "0");
  EXPECT_EQ(f[13], "20000");
  EXPECT_EQ(f[14], "20000");
  EXPECT_EQ(fields_of(lines[5])[5], "disconnect");
  // No UDP in this run: the master's counters are 0, the slaves' were not asked (empty).
  EXPECT_TRUE(lines[1].ends_with(",0,0,0,0,0,0,0,,,,,,,")) << lines[1];
}

TEST(IntervalCsv, UdpCountersPerInterval) {
  RunReport r = testing::make_report();
  r.intervals = {testing::make_udp_interval()};
  std::ostringstream out;
  write_interval_csv(r, out);
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 3u) << out.str();
  // g0/rr received 95 (7 gaps, 2 of them late: 5 lost); g1/stream sent 100.
  const auto rr = fields_of(lines[1]);
  ASSERT_EQ(rr.size(), 29u);
  EXPECT_EQ(rr[5], "rr");
  EXPECT_EQ(std::vector<std::string>(rr.begin() + 15, rr.end()),
            (std::vector<std::string>{"0", "95", "5", "2", "1", "3", "1500", "", "", "", "", "",
                                      "", ""}));
  const auto stream = fields_of(lines[2]);
  EXPECT_EQ(stream[5], "stream");
  EXPECT_EQ(std::vector<std::string>(stream.begin() + 15, stream.end()),
            (std::vector<std::string>{"100", "0", "0", "0", "0", "0", "0", "", "", "", "", "",
                                      "", ""}));
}

TEST(IntervalCsv, TheSlavesCountsBesideTheMasters) {
  RunReport r = testing::make_report();
  r.intervals = {testing::make_udp_interval_with_slaves()};
  std::ostringstream out;
  write_interval_csv(r, out);
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 3u) << out.str();
  // g0/rr: the slave sent the 100 the master's read counted; g1/stream: the slave received 97.
  const auto rr = fields_of(lines[1]);
  ASSERT_EQ(rr.size(), 29u);
  EXPECT_EQ(std::vector<std::string>(rr.begin() + 22, rr.end()),
            (std::vector<std::string>{"100", "0", "0", "0", "0", "0", "0"}));
  const auto stream = fields_of(lines[2]);
  EXPECT_EQ(std::vector<std::string>(stream.begin() + 22, stream.end()),
            (std::vector<std::string>{"0", "97", "3", "1", "0", "0", "2000"}));

  // A slave whose counts did not come: empty, never 0.
  r.intervals[0].peers = {1, 0, "no counts from slave h1"};
  std::ostringstream missing;
  write_interval_csv(r, missing);
  EXPECT_TRUE(lines_of(missing.str())[2].ends_with(",100,0,0,0,0,0,0,,,,,,,")) << missing.str();
}

TEST(IntervalCsv, AnIntervalsLossIsGapsMinusLateAndMayBeNegative) {
  RunReport r = testing::make_report();
  std::vector<engine::SlotStats> a(12);
  // 10 arrived, 1 new gap, 3 late arrivals filling an earlier interval's gaps: -2.
  a[4].counters.datagrams = {0, 10, 1, 3, 0, 0, 0};
  r.intervals = {testing::make_interval(testing::kStartUnixNs, 1, a)};
  std::ostringstream out;
  write_interval_csv(r, out);
  const auto lines = lines_of(out.str());
  ASSERT_GE(lines.size(), 2u) << out.str();
  EXPECT_EQ(fields_of(lines[1])[17], "-2") << out.str();
}

TEST(IntervalCsv, NamesAreQuoted) {
  RunReport r = testing::make_report();
  r.master.result.groups[0].name = "web, front";
  std::ostringstream out;
  write_interval_csv(r, out);
  EXPECT_NE(out.str().find(",1,\"web, front\",rr,200,"), std::string::npos) << out.str();
}

TEST(IntervalCsv, EmptyReportHasHeaderOnly) {
  std::ostringstream out;
  write_interval_csv(RunReport{}, out);
  EXPECT_EQ(out.str(), std::string(kIntervalCsvHeader) + "\n");
}

}  // namespace
}  // namespace volley::report
