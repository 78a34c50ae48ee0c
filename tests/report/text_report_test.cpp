#include "volley/report/text_report.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "report/report_fixture.hpp"

namespace volley::report {
namespace {

using testing::lines_of;

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

class FinalReport : public ::testing::Test {
 protected:
  RunReport report_ = testing::make_report();
  std::string text_ = format_final_report(report_);
};

TEST_F(FinalReport, FitsIn80Columns) {
  for (const std::string& line : lines_of(text_)) {
    EXPECT_LE(line.size(), 80u) << "too long: " << line;
  }
  EXPECT_EQ(text_.back(), '\n');
}

TEST_F(FinalReport, RunHeader) {
  EXPECT_TRUE(contains(text_, "profile pingpong")) << text_;
  EXPECT_TRUE(contains(text_, "status ok"));
  EXPECT_TRUE(contains(text_, "duration 6.50s"));
  EXPECT_FALSE(contains(text_, "failure"));
}

TEST_F(FinalReport, TransactionsTable) {
  EXPECT_TRUE(contains(text_, "Transactions, master"));
  for (const char* h :
       {"Iterations", "Txn/s", "Bytes", "Bits/s", "p50", "p99", "p99.9", "Errors"}) {
    EXPECT_TRUE(contains(text_, h)) << h;
  }
  // rr: 1000 iterations in 5 s, 2000 KiB, p50 20us, p99 50us, p99.9 1ms, 2 errors.
  const std::string rr_row =
      "*rr               1000  200.00    1.95MB   3.28Mb/s 20.0us 50.0us 1.00ms      2\n";
  EXPECT_TRUE(contains(text_, rr_row)) << text_;
  EXPECT_TRUE(contains(text_, "g0 (4 strands)\n"));
  EXPECT_TRUE(contains(text_, "g1 (1 strand)\n"));
  EXPECT_TRUE(contains(text_, " disconnect          4")) << "fits its column";
}

TEST_F(FinalReport, FlowopTables) {
  EXPECT_TRUE(contains(text_, "Flowops, master"));
  EXPECT_TRUE(contains(text_, "Flowop latency, master"));
  for (const char* h : {"Ops", "Op/s", "Expired", "Count", "Mean", "p90", "Max"}) {
    EXPECT_TRUE(contains(text_, h)) << h;
  }
  EXPECT_TRUE(contains(text_, "g0/rr (step 1)"));
  // read: 1000 ops, 200/s, 1000 KiB, 2 errors, 3 expired.
  EXPECT_TRUE(
      contains(text_, "  1 read                  1000    200.00  1000.00KB         2         3"))
      << text_;
}

TEST_F(FinalReport, Totals) {
  EXPECT_TRUE(contains(text_, "Totals, master, timed steps 1 (5.00s, set-up excluded)"));
  EXPECT_TRUE(contains(text_, "300.00 txn/s"));
  EXPECT_TRUE(contains(text_, "500.00 op/s"));
  EXPECT_TRUE(contains(text_, "55.71Mb/s"));
  EXPECT_TRUE(contains(text_, "requested 5, established 5"));
  EXPECT_TRUE(contains(text_, "errors 2: reset 2"));
  EXPECT_FALSE(contains(text_, "refused"));
}

TEST_F(FinalReport, ConnectionsReadExactlyInTheTimedStepsOnly) {
  EXPECT_FALSE(contains(text_, "read exactly")) << "no connection was counted";
  RunReport r = testing::make_report();
  r.master.result.windows[1].connections_read_exactly = 5;
  r.slaves[0].result.windows[1].connections_read_exactly = 4;
  r.slaves[0].result.windows[0].connections_read_exactly = 100;  // not a timed step
  EXPECT_TRUE(contains(format_final_report(r),
                       "  read exactly  on 4 connections by the slave, 5 by the master\n"));
}

TEST_F(FinalReport, NoErrorsSaysZero) {
  RunReport r = testing::make_report();
  r.master.result.groups[0].transactions[1].flowops[1].stats.counters.errors = {};
  EXPECT_TRUE(contains(format_final_report(r), "  errors 0\n"));
}

TEST_F(FinalReport, CpuTable) {
  EXPECT_TRUE(contains(text_, "CPU, timed part"));
  for (const char* h :
       {"usr%", "sys%", "irq%", "sirq%", "busy%", "cores", "us/txn service", "process", "system"}) {
    EXPECT_TRUE(contains(text_, h)) << h;
  }
  // master: usr 37.5, sys 12.5, busy 50, hottest cpu0 at 100, 0.40 cores, 1333.33 and 6666.67
  // us per transaction.
  EXPECT_TRUE(contains(
      text_, "master      37.5  12.5   0.0   0.0  50.0     0 100.0  0.40   1333.33   6666.67\n"))
      << text_;
  EXPECT_TRUE(contains(
      text_, "slave1      37.5  12.5   0.0   0.0  50.0     0 100.0     -         -   6666.67\n"));
}

TEST_F(FinalReport, NicTable) {
  EXPECT_TRUE(contains(text_, "NIC, timed part"));
  EXPECT_TRUE(contains(text_, "  eth0"));
  EXPECT_TRUE(contains(text_, "  lo"));
  EXPECT_FALSE(contains(text_, "eth1")) << "interfaces without traffic are skipped";
  EXPECT_TRUE(contains(text_, "8.00Mb/s"));
  EXPECT_TRUE(contains(text_, "16.00Mb/s"));
}

TEST_F(FinalReport, KernelCountersThatMoved) {
  EXPECT_TRUE(contains(text_,
                       "Kernel counters, timed part (those that moved)\n"
                       "Host/counter                         Delta\n"
                       "master\n"
                       "  Tcp.RetransSegs                       42\n"
                       "  Udp.RcvbufErrors                    1000\n"
                       "  softnet processed                    500\n"
                       "  softnet time_squeeze                   3\n"))
      << text_;
  EXPECT_FALSE(contains(text_, "ListenOverflows")) << "counters that did not move are left out";
  EXPECT_FALSE(contains(text_, "softnet dropped"));
}

TEST(FinalReportKernel, NothingMovedNoSection) {
  RunReport r = testing::make_report();
  r.master.kernel = sampling::KernelCounterDeltas{};
  r.master.kernel->counters["Udp.NoPorts"] = 0;
  r.master.kernel->softnet = std::vector<sampling::SoftnetDelta>{{0, 0, 0, 0}};
  EXPECT_FALSE(contains(format_final_report(r), "Kernel counters"));
  r.slaves[0].kernel = sampling::KernelCounterDeltas{};
  r.slaves[0].kernel->counters["TcpExt.ListenOverflows"] = 7;
  r.slaves[0].kernel->went_backwards = {"Udp.InErrors"};
  const std::string text = format_final_report(r);
  EXPECT_TRUE(contains(text,
                       "slave1\n"
                       "  TcpExt.ListenOverflows                 7\n"
                       "  went backwards (no delta): Udp.InErrors\n"))
      << text;
  const auto start = text.find("Kernel counters");
  const std::string section = text.substr(start, text.find("\n\n", start) - start);
  EXPECT_FALSE(contains(section, "master")) << "the master's counters did not move";
}

TEST_F(FinalReport, UperfRunStatistics) {
  EXPECT_TRUE(
      contains(text_,
               "Run Statistics\n"
               "Hostname            Time       Data   Throughput   Operations      Errors\n"))
      << text_;
  EXPECT_TRUE(contains(
      text_, "slave1             5.00s    32.87MB    55.15Mb/s         2490           0\n"))
      << text_;
  EXPECT_TRUE(contains(
      text_, "master             5.00s    33.20MB    55.71Mb/s         2500           2\n"));
  EXPECT_TRUE(contains(
      text_, "Difference(%)      0.00%      1.00%        1.00%        0.40%     100.00%\n"));
}

TEST(FinalReportStatus, LongNamesAndManyErrorKindsStayIn80Columns) {
  RunReport r = testing::make_report();
  r.master.result.groups[0].transactions[1].name = "a_rather_long_transaction_name";
  r.master.result.groups[0].transactions[1].flowops[1].type = "sendfilev_with_long_name";
  r.slaves[0].host = "very-long-slave-hostname.example.com";
  auto& errors = r.master.result.groups[0].transactions[1].flowops[1].stats.counters.errors;
  for (auto& e : errors) e = 123'456'789;
  const std::string text = format_final_report(r);
  for (const std::string& line : lines_of(text)) {
    // Run Statistics widens its first column to the longest host name rather than cut it.
    if (line.starts_with("Run Statistics")) break;
    EXPECT_LE(line.size(), 80u) << "too long: " << line;
  }
  EXPECT_TRUE(contains(text, "\n*a_rather_long_transaction_name\n")) << text;
  EXPECT_TRUE(contains(text, "not_connected 123456789")) << text;
}

TEST(FinalReportStatus, FailedRunShowsReason) {
  RunReport r = testing::make_report();
  r.status = RunStatus::kFailed;
  r.failure = "slave1 stopped answering";
  const std::string text = format_final_report(r);
  EXPECT_TRUE(contains(text, "status failed"));
  EXPECT_TRUE(contains(text, "failure: slave1 stopped answering"));
}

TEST(FinalReportStatus, FailedOperationsAndEachSidesFirstErrorsAreInTheHeader) {
  // An ok run with failures is ok only because canfail allowed them: the header says which, on
  // which side, and each side's first errors, a run of the same one folded.
  RunReport r = testing::make_report();
  r.slaves[0]
      .result.groups[0]
      .transactions[0]
      .flowops[0]
      .stats.counters.errors[static_cast<std::size_t>(results::ErrorKind::kNotConnected)] = 3;
  const results::ErrorSample no_port{"g0/connect/connect (strand 0)",
                                     "connect to 10.0.0.2: Cannot assign requested address", false};
  r.master.result.error_samples = {no_port, no_port, no_port};
  r.slaves[0].result.error_samples = {{"g0/disconnect/disconnect (strand 0)",
                                       "disconnect: connection (anonymous) is not open", true}};
  std::string text = format_final_report(r);
  EXPECT_TRUE(contains(text,
                       "  failed operations, allowed by canfail (all steps): master: reset "
                       "2; slave\n    slave1: not_connected 3\n"))
      << text;
  EXPECT_TRUE(contains(text,
                       "  first errors:\n    g0/connect/connect (strand 0): connect to "
                       "10.0.0.2: Cannot assign requested address\n      (and 2 more like "
                       "it)\n  first errors, slave slave1:\n    g0/disconnect/disconnect "
                       "(strand 0): disconnect: connection (anonymous) is not open (stopped "
                       "its strand)\n"))
      << text;
  EXPECT_TRUE(contains(text, "(Errors: failed operations, not counted in Operations;")) << text;
  r.status = RunStatus::kFailed;
  text = format_final_report(r);
  EXPECT_TRUE(contains(text, "  failed operations (all steps): master: reset 2;")) << text;
}

TEST(FinalReportZeroCopy, EachZeroCopyWriteWithWhatTheKernelCopied) {
  RunReport r = testing::make_report();
  EXPECT_FALSE(contains(format_final_report(r), "Zero-copy")) << "no section without zerocopy";
  results::ZeroCopyCounters& z =
      r.master.result.groups[1].transactions[1].flowops[0].stats.counters.zerocopy;
  z = results::ZeroCopyCounters{520, 0, 520};
  std::string text = format_final_report(r);
  EXPECT_TRUE(contains(text, "Zero-copy writes")) << text;
  EXPECT_TRUE(contains(text,
                       "  g1/stream 0 write                520             0           520"
                       "            0\n"))
      << text;
  EXPECT_TRUE(contains(text,
                       "    copied by the kernel: 100% (loopback and devices that cannot "
                       "gather copy\n"))
      << text;
  for (const std::string& line : lines_of(text)) EXPECT_LE(line.size(), 80u) << line;
  z = results::ZeroCopyCounters{520, 400, 100};
  text = format_final_report(r);
  EXPECT_TRUE(contains(text, "           20\n    copied by the kernel: 20%\n")) << text;
  z = results::ZeroCopyCounters{3, 0, 0};
  EXPECT_TRUE(contains(format_final_report(r), "copied by the kernel: - (no completion came)"));
}

TEST(FinalReportStatus, EmptyReport) {
  const std::string text = format_final_report(RunReport{});
  EXPECT_TRUE(contains(text, "Run Statistics"));
  EXPECT_TRUE(contains(text, "errors 0"));
  EXPECT_FALSE(contains(text, "Difference(%)"));
}

TEST(IntervalLine, RunningStep) {
  const RunReport r = testing::make_report();
  const std::string line = format_interval_line(r, r.intervals[0]);
  // Step 1 has run for 1 s at the end of the first interval; g0/rr and g1/stream add up:
  // 300 txn/s, 400 + 100 op/s, (400 KiB + 6400 KiB) * 8 b/s, p50 of 200 x 20us + 100 x 100us.
  EXPECT_EQ(line, "step1   1.00s  300.00 txn/s  500.00 op/s 55.71Mb/s p50 20.0us p99  100us err 0");
  EXPECT_LT(line.size(), 80u);
}

TEST(IntervalLine, UdpCountsFollowWhenTheStepUsesUdp) {
  RunReport r = testing::make_report();
  r.intervals = {testing::make_udp_interval()};
  const std::string line = format_interval_line(r, r.intervals[0]);
  // Per direction; the slaves were not asked (a run without them), so their side is unknown.
  EXPECT_TRUE(
      line.ends_with(" err 0 udp m->s sent 100 rcvd ? (slave counts missing) udp s->m "
                     "sent ? rcvd 95 lost 5 (5.00%) late 2 dup 1 jitter 1.50us"))
      << line;
  r.intervals = {testing::make_udp_interval_with_slaves()};
  const std::string both = format_interval_line(r, r.intervals[0]);
  EXPECT_TRUE(
      both.ends_with(" err 0 udp m->s sent 100 rcvd 97 lost 3 (3.00%) late 1 dup 0 "
                     "jitter 2.00us udp s->m sent 100 rcvd 95 lost 5 (5.00%) late 2 dup 1 "
                     "jitter 1.50us"))
      << both;
  // Without UDP the line stays as it was.
  EXPECT_FALSE(contains(
      format_interval_line(testing::make_report(), testing::make_report().intervals[0]), "udp"));
}

TEST(IntervalLine, OneGroupUsesTheTransactionName) {
  const RunReport r = testing::make_report();
  const std::string line = format_interval_line(r, r.intervals[2]);
  EXPECT_TRUE(line.starts_with("disconnect ")) << line;
  EXPECT_TRUE(contains(line, "4.00 txn/s")) << line;
}

TEST(IntervalLine, WithoutResultTimesFromTheFirstInterval) {
  RunReport r = testing::make_report();
  r.master.result = {};
  const std::string line = format_interval_line(r, r.intervals[1]);
  EXPECT_TRUE(contains(line, "   2.00s ")) << line;
}

}  // namespace
}  // namespace volley::report
