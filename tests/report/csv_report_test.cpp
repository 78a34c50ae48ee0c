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
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string f; std::getline(in, f, ',');) fields.push_back(f);
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
            "udp_late,udp_duplicates,udp_timeouts,udp_jitter_ns");
  // Interval 1: g0/rr and g1/stream; interval 2: g0/rr (stalled) and g1/stream; interval 3:
  // g0/disconnect.
  ASSERT_EQ(lines.size(), 1u + 5u);
  const auto f = fields_of(lines[1]);
  ASSERT_EQ(f.size(), 22u);
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
  EXPECT_EQ(lines[1].substr(lines[1].size() - 14), ",0,0,0,0,0,0,0");  // no UDP in this run
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
  ASSERT_EQ(rr.size(), 22u);
  EXPECT_EQ(rr[5], "rr");
  EXPECT_EQ(std::vector<std::string>(rr.begin() + 15, rr.end()),
            (std::vector<std::string>{"0", "95", "5", "2", "1", "3", "1500"}));
  const auto stream = fields_of(lines[2]);
  EXPECT_EQ(stream[5], "stream");
  EXPECT_EQ(std::vector<std::string>(stream.begin() + 15, stream.end()),
            (std::vector<std::string>{"100", "0", "0", "0", "0", "0", "0"}));
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
