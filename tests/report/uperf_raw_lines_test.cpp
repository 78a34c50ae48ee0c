#include "volley/report/uperf_raw_lines.hpp"

#include <gtest/gtest.h>

#include <string>

#include "report/report_fixture.hpp"
#include "volley/report/uperf_output.hpp"

namespace volley::report {
namespace {

using testing::kKiB;
using testing::kStartUnixNs;

constexpr std::int64_t kSecond = 1'000'000'000;

/// make_report() as the master holds it while the run goes: no results yet, no interval shown
/// yet, and its steps' times as the master recorded them.
RunReport running_report() {
  RunReport r = testing::make_report();
  for (const results::TxnWindow& w : r.master.result.windows)
    r.master_steps.push_back({w.start_unix_ns, w.start_unix_ns + w.elapsed.count()});
  r.master.result = {};
  r.slaves.clear();
  r.intervals.clear();
  return r;
}

/// Shows the fixture's interval `n` as the master does: into the report, then to the lines.
std::string show(UperfRawLines& lines, RunReport& report, std::size_t n) {
  report.intervals.push_back(testing::make_intervals().at(n));
  return lines.interval(report, report.intervals.back());
}

std::string raw_line(std::int64_t at, const char* name, std::uint64_t bytes, std::uint64_t ops) {
  return format_uperf_raw_line(at, name, bytes, ops);
}

TEST(UperfRawLines, EachIntervalPrintsItsLinesAsItArrives) {
  RunReport report = running_report();
  const std::int64_t s = kStartUnixNs;
  UperfRawLines lines(true, s - kSecond);
  // The first interval (step 1's first second) ends the start line, closes step 0 (Txn1) and
  // opens step 1 (Txn2) with its zero line at the release and its counters so far. Bytes are the
  // flowop bytes of every group, operations flowop executions.
  EXPECT_EQ(show(lines, report, 0),
            format_uperf_setup_time(1.0) + raw_line(s, "Txn1", 0, 0) +
                raw_line(s + kSecond, "Txn1", 0, 0) + "\n" + raw_line(s + kSecond, "Txn2", 0, 0) +
                raw_line(s + 2 * kSecond, "Txn2", (200 + 200 + 6400) * kKiB, 500));
  // The second: one cumulative line.
  EXPECT_EQ(show(lines, report, 1),
            raw_line(s + 3 * kSecond, "Txn2", (200 + 200 + 9600) * kKiB, 550));
  // The third is in step 2: step 1's last line at its end, then Txn3's first lines.
  EXPECT_EQ(show(lines, report, 2),
            raw_line(s + 6 * kSecond, "Txn2", (200 + 200 + 9600) * kKiB, 550) + "\n" +
                raw_line(s + 6 * kSecond, "Txn3", 0, 0) + raw_line(s + 7 * kSecond, "Txn3", 0, 4));
  // At the end: step 2's last line said everything already; the rule and the Total line.
  report.master.result = testing::make_result(false);
  const Totals all = all_totals(report.master.result);
  EXPECT_EQ(lines.finish(report),
            "\n" + uperf_rule() + raw_line(s + 6'500'000'000, "Total", all.bytes, all.ops));
  EXPECT_EQ(all.ops, 2509U);
}

TEST(UperfRawLines, WithoutIntervalsEveryStepAtTheEndFromTheResults) {
  // A master spread over processes shows no intervals: each step's lines come from its results.
  const RunReport report = testing::make_report();
  const std::int64_t s = kStartUnixNs;
  UperfRawLines lines(true, s);
  const std::string out = lines.finish(report);
  EXPECT_EQ(out.substr(0, out.find("Txn2")), format_uperf_setup_time(0) +
                                                 raw_line(s, "Txn1", 0, 0) +
                                                 raw_line(s + kSecond, "Txn1", 0, 5) + "\n" +
                                                 "timestamp_ms:1700000001123.4567 name:");
  EXPECT_NE(out.find(raw_line(s + 6 * kSecond, "Txn2", (1000 + 1000 + 500 * 64) * kKiB, 2500)),
            std::string::npos)
      << out;
}

TEST(UperfRawLines, NoTwoLinesOfAStepInOneMillisecond) {
  RunReport report = running_report();
  UperfRawLines lines(true, kStartUnixNs);
  (void)show(lines, report, 0);
  // A short last interval ending in the millisecond of the previous line: with nothing new it
  // is not printed; with more counted it moves to the next millisecond.
  IntervalSample same = report.intervals.back();
  same.start_unix_ns += kSecond - 200'000;
  same.length = std::chrono::microseconds(100);
  for (auto& row : same.txns) row = {};
  report.intervals.push_back(same);
  EXPECT_EQ(lines.interval(report, same), "");
  same.txns[1].ops = 1;  // g0/rr (transaction rows: g0/connect, g0/rr, ...)
  EXPECT_EQ(lines.interval(report, same),
            raw_line(1'700'000'002'124'000'000, "Txn2", (200 + 200 + 6400) * kKiB, 501));
}

TEST(UperfRawLines, AStepEndedInTheMillisecondOfItsReleaseEndsInTheNextOne) {
  RunReport report = running_report();
  report.master_steps[0].ended_unix_ns = kStartUnixNs + 300'000;  // 4 connects in 0.3 ms
  UperfRawLines lines(true, kStartUnixNs);
  report.intervals.push_back(testing::make_intervals().at(0));
  report.intervals.back().txns[0].ops = 4;  // g0/connect
  const std::string out = lines.interval(report, report.intervals.back());
  EXPECT_EQ(out.substr(0, out.find("\n\n") + 1),
            format_uperf_setup_time(0) + raw_line(kStartUnixNs, "Txn1", 0, 0) +
                raw_line(1'700'000'000'124'000'000, "Txn1", 0, 4));
}

TEST(UperfRawLines, NoStatisticsOnlyEndsTheStartLine) {
  RunReport report = running_report();
  UperfRawLines lines(false, kStartUnixNs - 2 * kSecond);
  EXPECT_EQ(show(lines, report, 0), format_uperf_setup_time(2.0));
  EXPECT_EQ(lines.finish(report), "");
}

}  // namespace
}  // namespace volley::report
