#include "volley/report/csv_report.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "report/report_fixture.hpp"
#include "volley/report/json_report.hpp"

namespace volley::report {
namespace {

using testing::lines_of;

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

/// The interval CSV of a report: its text (for failure messages) and its lines.
struct Csv {
  std::string text;
  std::vector<std::string> lines;
};
Csv interval_csv(const RunReport& r) {
  std::ostringstream out;
  write_interval_csv(r, out);
  return {out.str(), lines_of(out.str())};
}

/// The fields of `line` from the `first`-th up to, not including, the `end`-th.
std::vector<std::string> fields_between(const std::string& line, std::size_t first,
                                        std::size_t end) {
  const auto f = fields_of(line);
  if (first >= f.size() || end > f.size() || end < first) return {};
  return {f.begin() + static_cast<std::ptrdiff_t>(first),
          f.begin() + static_cast<std::ptrdiff_t>(end)};
}

/// Where the TLS columns begin (after the slaves' TCP columns).
constexpr std::size_t kTlsColumns = 43;

TEST(CsvField, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(csv_field("txn2"), "txn2");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field(" padded"), "\" padded\"");
  EXPECT_EQ(csv_field(""), "");
}

TEST(IntervalCsv, HeaderAndRows) {
  const auto lines = interval_csv(testing::make_report()).lines;
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0],
            "start_unix_ns,t_s,length_s,step,group,transaction,transactions,transactions_per_s,"
            "ops,ops_per_s,bytes,bits_per_s,errors,p50_ns,p99_ns,udp_sent,udp_received,udp_lost,"
            "udp_late,udp_duplicates,udp_timeouts,udp_jitter_ns,slave_udp_sent,slave_udp_received,"
            "slave_udp_lost,slave_udp_late,slave_udp_duplicates,slave_udp_timeouts,"
            "slave_udp_jitter_ns,tcp_connections,tcp_rtt_p50_us,tcp_cwnd_p50,"
            "tcp_delivery_rate_p50,tcp_retransmits,tcp_rwnd_limited_pct,tcp_sndbuf_limited_pct,"
            "slave_tcp_connections,slave_tcp_rtt_p50_us,slave_tcp_cwnd_p50,"
            "slave_tcp_delivery_rate_p50,slave_tcp_retransmits,slave_tcp_rwnd_limited_pct,"
            "slave_tcp_sndbuf_limited_pct,tls_handshakes,tls_resumed,tls_handshakes_per_s");
  // Interval 1: g0/rr and g1/stream; interval 2: g0/rr (stalled) and g1/stream; interval 3:
  // g0/disconnect.
  ASSERT_EQ(lines.size(), 1u + 5u);
  const auto f = fields_of(lines[1]);
  ASSERT_EQ(f.size(), 46u);
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
  // No UDP in this run: the master's counters are 0, the slaves' were not asked (empty); no TCP
  // figures in this interval (empty).
  EXPECT_TRUE(lines[1].ends_with(",0,0,0,0,0,0,0" + std::string(21, ',') + ",0,0,0")) << lines[1];
}

TEST(IntervalCsv, UdpCountersPerInterval) {
  RunReport r = testing::make_report();
  r.intervals = {testing::make_udp_interval()};
  const auto csv = interval_csv(r);
  ASSERT_EQ(csv.lines.size(), 3u) << csv.text;
  // g0/rr received 95 (7 gaps, 2 of them late: 5 lost); g1/stream sent 100.
  ASSERT_EQ(fields_of(csv.lines[1]).size(), 46u);
  EXPECT_EQ(fields_of(csv.lines[1])[5], "rr");
  EXPECT_EQ(fields_between(csv.lines[1], 15, kTlsColumns),
            (std::vector<std::string>{"0", "95", "5", "2", "1", "3", "1500", "", "", "",
                                      "",  "",   "",  "",  "",  "",  "",     "", "", "",
                                      "",  "",   "",  "",  "",  "",  "",     ""}));
  EXPECT_EQ(fields_of(csv.lines[2])[5], "stream");
  EXPECT_EQ(
      fields_between(csv.lines[2], 15, kTlsColumns),
      (std::vector<std::string>{"100", "0", "0", "0", "0", "0", "0", "", "", "", "", "", "", "",
                                "",    "",  "",  "",  "",  "",  "",  "", "", "", "", "", "", ""}));
}

TEST(IntervalCsv, TheSlavesCountsBesideTheMasters) {
  RunReport r = testing::make_report();
  r.intervals = {testing::make_udp_interval_with_slaves()};
  const auto csv = interval_csv(r);
  ASSERT_EQ(csv.lines.size(), 3u) << csv.text;
  // g0/rr: the slave sent the 100 the master's read counted; g1/stream: the slave received 97.
  ASSERT_EQ(fields_of(csv.lines[1]).size(), 46u);
  EXPECT_EQ(fields_between(csv.lines[1], 22, kTlsColumns),
            (std::vector<std::string>{"100", "0", "0", "0", "0", "0", "0", "", "", "", "",
                                      "",    "",  "",  "",  "",  "",  "",  "", "", ""}));
  EXPECT_EQ(fields_between(csv.lines[2], 22, kTlsColumns),
            (std::vector<std::string>{"0", "97", "3", "1", "0", "0", "2000", "", "", "", "",
                                      "",  "",   "",  "",  "",  "",  "",     "", "", ""}));

  // A slave whose counts did not come: empty, never 0.
  r.intervals[0].peers = {1, 0, "no counts from slave h1"};
  const auto missing = interval_csv(r);
  ASSERT_EQ(missing.lines.size(), 3u) << missing.text;
  EXPECT_TRUE(missing.lines[2].ends_with(",100,0,0,0,0,0,0" + std::string(21, ',') + ",0,0,0"))
      << missing.text;
}

// An interval's TCP figures: the master's connections of each transaction as it ended.
TEST(IntervalCsv, TheTcpColumnsHoldTheIntervalsBrief) {
  RunReport r = testing::make_report();
  TcpBrief brief;
  brief.connections = 4;
  brief.rtt_p50_us = 25;
  brief.cwnd_p50 = 10;
  brief.delivery_rate_p50 = 1e6;
  brief.retransmits = 3;
  brief.shares.rwnd_limited_pct = 12.5;
  r.intervals[0].txns[1].tcp = brief;
  const auto csv = interval_csv(r);
  bool found = false;
  for (std::size_t i = 1; i < csv.lines.size(); ++i) {
    const auto f = fields_of(csv.lines[i]);
    ASSERT_EQ(f.size(), 46u) << csv.lines[i];
    if (f[29].empty()) continue;
    found = true;
    EXPECT_EQ(fields_between(csv.lines[i], 29, kTlsColumns),
              (std::vector<std::string>{"4", "25", "10", "1000000", "3", "12.5", "0", "", "", "",
                                        "", "", "", ""}));
  }
  EXPECT_TRUE(found) << csv.text;
  const auto doc = to_json_document(r);
  bool in_json = false;
  for (const auto& t : doc["intervals"][0]["transactions"]) {
    if (t.contains("tcp")) in_json = t["tcp"]["connections"] == 4 && t["tcp"]["rtt_p50_us"] == 25;
  }
  EXPECT_TRUE(in_json) << doc["intervals"][0].dump();
}

// A TLS transaction's handshakes in an interval: all of them, the resumed ones, and their rate.
TEST(IntervalCsv, TheTlsColumnsHoldTheIntervalsHandshakes) {
  RunReport r = testing::make_report();
  r.intervals[0].txns[0].handshakes = 40;
  r.intervals[0].txns[0].resumed = 30;
  r.intervals[0].txns[0].transactions = 40;
  const auto csv = interval_csv(r);
  bool found = false;
  for (std::size_t i = 1; i < csv.lines.size(); ++i) {
    const auto f = fields_of(csv.lines[i]);
    ASSERT_EQ(f.size(), 46u) << csv.lines[i];
    if (f[5] != "connect") {
      EXPECT_EQ(fields_between(csv.lines[i], kTlsColumns, 46),
                (std::vector<std::string>{"0", "0", "0"}));
      continue;
    }
    found = true;
    EXPECT_EQ(fields_between(csv.lines[i], kTlsColumns, 46),
              (std::vector<std::string>{"40", "30", "40"}));
  }
  EXPECT_TRUE(found) << csv.text;
}

TEST(IntervalCsv, AnIntervalsLossIsGapsMinusLateAndMayBeNegative) {
  RunReport r = testing::make_report();
  std::vector<results::SlotStats> a(12);
  // 10 arrived, 1 new gap, 3 late arrivals filling an earlier interval's gaps: -2.
  a[4].counters.datagrams = {0, 10, 1, 3, 0, 0, 0};
  r.intervals = {testing::make_interval(testing::kStartUnixNs, 1, a)};
  const auto csv = interval_csv(r);
  ASSERT_GE(csv.lines.size(), 2u) << csv.text;
  EXPECT_EQ(fields_of(csv.lines[1])[17], "-2") << csv.text;
}

TEST(IntervalCsv, NamesAreQuoted) {
  RunReport r = testing::make_report();
  r.master.result.groups[0].name = "web, front";
  const auto csv = interval_csv(r);
  EXPECT_NE(csv.text.find(",1,\"web, front\",rr,200,"), std::string::npos) << csv.text;
}

TEST(IntervalCsv, EmptyReportHasHeaderOnly) {
  EXPECT_EQ(interval_csv(RunReport{}).text, std::string(kIntervalCsvHeader) + "\n");
}

// The slaves' TCP figures of an interval beside the master's: in the CSV and the JSON when every
// slave's part came, and left out (empty, never 0) when one is missing.
TEST(IntervalCsv, TheSlavesTcpColumnsHoldTheirBriefWhenEverySlaveAnswered) {
  RunReport r = testing::make_report();
  TcpBrief brief;
  brief.connections = 6;
  brief.rtt_p50_us = 40;
  brief.cwnd_p50 = 12;
  brief.delivery_rate_p50 = 2e6;
  brief.shares.sndbuf_limited_pct = 50;
  r.intervals[0].txns[1].peer_tcp = brief;
  r.intervals[0].peers = {1, 1, ""};
  auto slave_columns = [](const RunReport& report) {
    std::vector<std::vector<std::string>> out;
    const auto csv = interval_csv(report);
    for (std::size_t i = 1; i < csv.lines.size(); ++i) {
      EXPECT_EQ(fields_of(csv.lines[i]).size(), 46u) << csv.lines[i];
      if (!fields_of(csv.lines[i])[36].empty())
        out.push_back(fields_between(csv.lines[i], 36, kTlsColumns));
    }
    return out;
  };
  EXPECT_EQ(slave_columns(r),
            (std::vector<std::vector<std::string>>{{"6", "40", "12", "2000000", "0", "0", "50"}}));
  const auto doc = to_json_document(r);
  bool in_json = false;
  for (const auto& t : doc["intervals"][0]["transactions"]) {
    if (t.contains("slave_tcp")) in_json = t["slave_tcp"]["connections"] == 6;
  }
  EXPECT_TRUE(in_json) << doc["intervals"][0].dump();

  r.intervals[0].peers = {1, 0, "no counts from slave h1"};
  EXPECT_TRUE(slave_columns(r).empty());
  const auto missing = to_json_document(r);
  for (const auto& t : missing["intervals"][0]["transactions"]) {
    EXPECT_FALSE(t.contains("slave_tcp")) << t.dump();
  }
}

}  // namespace
}  // namespace volley::report
