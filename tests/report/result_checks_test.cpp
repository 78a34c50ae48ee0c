// Honest status: what makes a run that ended without an error still not "ok".
#include "volley/report/result_checks.hpp"

#include <gtest/gtest.h>

#include "report/report_fixture.hpp"

namespace volley::report {
namespace {

/// The fixture with an exact mirror as its slave and no errors: a correct run.
RunReport correct_run() {
  RunReport r = testing::make_report();
  for (auto& g : r.master.result.groups) {
    for (auto& t : g.transactions) {
      for (auto& f : t.flowops) {
        f.stats.counters.errors = {};
        f.stats.counters.expired = 0;
      }
    }
  }
  results::RunResult mirror = r.master.result;
  for (auto& g : mirror.groups) {
    for (auto& t : g.transactions) {
      for (auto& f : t.flowops)
        std::swap(f.stats.counters.bytes_read, f.stats.counters.bytes_written);
    }
  }
  r.slaves[0].result = std::move(mirror);
  return r;
}

results::SlotCounters& rr_read(results::RunResult& r) {
  return r.groups[0].transactions[1].flowops[1].stats.counters;
}

TEST(ResultChecks, CorrectRunHasNoProblem) {
  EXPECT_EQ(find_result_problem(correct_run(), false), "");
}

TEST(ResultChecks, TimedStepWithNoTransactionIsNotOk) {
  RunReport r = correct_run();
  for (auto& g : r.master.result.groups) g.transactions[1].stats.counters.ops = 0;
  EXPECT_EQ(find_result_problem(r, false),
            "timed step 1 completed 0 transactions (--allow-empty accepts that)");
  EXPECT_EQ(find_result_problem(r, true), "");
}

TEST(ResultChecks, GroupWithNoIterationIsNotOk) {
  RunReport r = correct_run();
  r.master.result.groups[1].transactions[1].stats.counters.ops = 0;  // g0 still works
  EXPECT_EQ(find_result_problem(r, false),
            "group 'g1' completed no iteration of transaction 'stream' (step 1) (--allow-empty "
            "accepts that)");
  EXPECT_EQ(find_result_problem(r, true), "");
  // A group with no strands on this side is not expected to do anything.
  r.master.result.groups[1].strands = 0;
  EXPECT_EQ(find_result_problem(r, false), "");
}

TEST(ResultChecks, SlaveReadLessThanTheMasterWroteIsNotOk) {
  RunReport r = correct_run();
  r.slaves[0].result.groups[1].transactions[1].flowops[0].stats.counters.bytes_read -= 100;
  const std::string problem = find_result_problem(r, true);  // never excused by --allow-empty
  EXPECT_NE(problem.find("bytes disagree with slave slave1 in step 1: the master wrote"),
            std::string::npos)
      << problem;
}

TEST(ResultChecks, ACutNoLongerExplainsBytesTheMasterDidNotRead) {
  // The end-of-step drain reads what was in flight when a step was cut: a shortfall is a fault,
  // cut or not (an expired operation excuses nothing, or a run could say "ok" with megabytes
  // unaccounted for).
  RunReport r = correct_run();
  rr_read(r.master.result).bytes_read -= 512;
  EXPECT_NE(find_result_problem(r, false).find("it wrote"), std::string::npos);
  rr_read(r.master.result).expired = 1;
  EXPECT_NE(find_result_problem(r, false).find("it wrote"), std::string::npos);
  rr_read(r.master.result).bytes_read += 1024;  // more than was written
  EXPECT_NE(find_result_problem(r, false).find("it wrote"), std::string::npos);
}

TEST(ResultChecks, BytesAgreeingOverTheRunButNotPerStepAreNotOk) {
  // Bytes one step left unread and the next step's reads took are not that step's work.
  RunReport r = correct_run();
  auto& txns = r.slaves[0].result.groups[1].transactions;
  ASSERT_GE(txns.size(), 2U);
  ASSERT_GE(txns[1].flowops.size(), 1U);
  ASSERT_GE(txns[0].flowops.size(), 1U);
  txns[1].flowops[0].stats.counters.bytes_read -= 100;
  txns[0].flowops[0].stats.counters.bytes_read += 100;
  EXPECT_NE(find_result_problem(r, false).find("bytes disagree with slave slave1 in step"),
            std::string::npos);
}

TEST(ResultChecks, ErrorsOrMissingSlavesSkipTheByteRule) {
  RunReport r = correct_run();
  r.slaves[0].result.groups[1].transactions[1].flowops[0].stats.counters.bytes_read -= 100;
  rr_read(r.master.result).errors[0] = 1;  // canfail let the run go on after a reset
  EXPECT_EQ(find_result_problem(r, false), "");
  r = correct_run();
  r.slaves[0].result = {};
  r.slaves[0].missing = "lost slave slave1: reset";
  EXPECT_EQ(find_result_problem(r, false), "");
}

TEST(ResultChecks, FailuresThatMovedNoBytesDoNotSkipTheByteRule) {
  // A write or read on a connection whose connect failed (canfail) found no connection: it
  // moved nothing, so it cannot explain bytes that went missing.
  RunReport r = correct_run();
  r.slaves[0].result.groups[1].transactions[1].flowops[0].stats.counters.bytes_read -= 100;
  for (const auto kind :
       {results::ErrorKind::kNotConnected, results::ErrorKind::kAddrUnavailable}) {
    rr_read(r.master.result).errors[static_cast<std::size_t>(kind)] = 1;
  }
  EXPECT_NE(find_result_problem(r, false).find("bytes disagree"), std::string::npos);
}

/// `r` with a UDP write added to the master's stream transaction and its mirror read on the
/// slave: `sent` datagrams of 100 bytes sent, `received` of them arrived.
RunReport with_udp_flowop(RunReport r, std::uint64_t sent, std::uint64_t received) {
  results::FlowopResult write;
  write.type = "write";
  write.stats.counters.ops = sent;
  write.stats.counters.bytes_written = 100 * sent;
  write.stats.counters.datagrams.sent = sent;
  results::FlowopResult read;
  read.type = "read";
  read.stats.counters.ops = received;
  read.stats.counters.bytes_read = 100 * received;
  read.stats.counters.datagrams.received = received;
  read.stats.counters.datagrams.lost = sent - std::min(sent, received);
  r.master.result.groups[0].transactions[1].flowops.push_back(write);
  r.slaves[0].result.groups[0].transactions[1].flowops.push_back(read);
  return r;
}

TEST(ResultChecks, UdpLossInAMixedProfileIsNotAByteDisagreement) {
  // 5 of 100 datagrams lost: reported, not a fault; the TCP flowops beside them still agree.
  EXPECT_EQ(find_result_problem(with_udp_flowop(correct_run(), 100, 95), false), "");
}

TEST(ResultChecks, TcpDisagreementInAMixedProfileStillFails) {
  // One UDP flowop does not exempt the profile's TCP flowops from the byte rule.
  RunReport r = with_udp_flowop(correct_run(), 100, 95);
  r.slaves[0].result.groups[1].transactions[1].flowops[0].stats.counters.bytes_read -= 100;
  const std::string problem = find_result_problem(r, false);
  EXPECT_NE(problem.find("bytes disagree with slave slave1 in step 1: the master wrote"),
            std::string::npos)
      << problem;
}

TEST(ResultChecks, MoreDatagramsReceivedThanSentFails) {
  const std::string problem = find_result_problem(with_udp_flowop(correct_run(), 100, 101), false);
  EXPECT_EQ(problem,
            "datagrams disagree in group 'g0' step 1 flowop 2 (master to slaves): 100 sent, 101 "
            "received");
}

TEST(ResultChecks, UdpTimeoutsDoNotExcuseTheStreams) {
  // A UDP read that timed out is not a stream error: the TCP rule still holds in that step.
  RunReport r = with_udp_flowop(correct_run(), 100, 95);
  r.slaves[0].result.groups[0].transactions[1].flowops.back().stats.counters.datagrams.timeouts = 5;
  rr_read(r.master.result).bytes_read -= 1;
  EXPECT_NE(find_result_problem(r, false).find("it wrote"), std::string::npos);
}

TEST(ResultChecks, FewerConnectionsAcceptedThanTheMasterOpenedIsNotOk) {
  // A profile that moves no bytes (uperf's canfail.xml: connect, then disconnect) gives the byte
  // rule nothing to catch: the connection rule must fail a slave whose mirror missed some.
  RunReport r = correct_run();
  results::FlowopResult& accept = r.slaves[0].result.groups[0].transactions[0].flowops[0];
  accept.type = "accept";  // the slave's mirror of the master's connect
  EXPECT_EQ(find_result_problem(r, false), "");
  accept.stats.counters.ops -= 1;
  EXPECT_EQ(find_result_problem(r, false),
            "connections disagree with slave slave1 in step 0: group 'g0' flowop 0 (connect) "
            "opened 4 and the slave's accept took 3");
}

constexpr auto kRefused = static_cast<std::size_t>(results::ErrorKind::kRefused);
constexpr auto kAddrUnavailable = static_cast<std::size_t>(results::ErrorKind::kAddrUnavailable);

TEST(ResultChecks, FailedConnectsAndAcceptsAreCountedNotExcused) {
  // A connect that failed (canfail) opened nothing the slave could take: the counts still agree.
  RunReport connect_failed = correct_run();
  connect_failed.slaves[0].result.groups[0].transactions[0].flowops[0].type = "accept";
  connect_failed.master.result.groups[0]
      .transactions[0]
      .flowops[0]
      .stats.counters.errors[kAddrUnavailable] = 3;
  EXPECT_EQ(find_result_problem(connect_failed, false), "");
  // Errors do not excuse a slave that took fewer connections than the master opened: with
  // canfail's errors on the master's connects, the slave's mirror missing one still fails.
  connect_failed.slaves[0].result.groups[0].transactions[0].flowops[0].stats.counters.ops -= 1;
  EXPECT_EQ(find_result_problem(connect_failed, false),
            "connections disagree with slave slave1 in step 0: group 'g0' flowop 0 (connect) "
            "opened 4 and failed 3 time(s) and the slave's accept took 3");
  // An accept that failed had taken the connection: its errors count with its operations.
  RunReport accept_failed = correct_run();
  accept_failed.slaves[0].result.groups[0].transactions[0].flowops[0].type = "accept";
  results::SlotCounters& accept =
      accept_failed.slaves[0].result.groups[0].transactions[0].flowops[0].stats.counters;
  accept.ops -= 1;
  accept.errors[kRefused] = 1;
  EXPECT_EQ(find_result_problem(accept_failed, false), "");
  accept.errors[kRefused] = 2;  // one more failure than the connections it could have met
  EXPECT_NE(find_result_problem(accept_failed, false).find("connections disagree"),
            std::string::npos);
}

TEST(ResultChecks, ConnectionCountsAreExcusedByATimeoutOrACut) {
  RunReport timeout = correct_run();
  timeout.slaves[0].result.groups[0].transactions[0].flowops[0].stats.counters.ops -= 1;
  timeout.master.result.groups[0]
      .transactions[0]
      .flowops[0]
      .stats.counters.errors[static_cast<std::size_t>(results::ErrorKind::kTimedOut)] = 1;
  EXPECT_EQ(find_result_problem(timeout, false), "");
  RunReport cut = correct_run();
  cut.slaves[0].result.groups[0].transactions[0].flowops[0].stats.counters.ops -= 1;
  cut.master.result.windows[0].is_duration = true;  // a cut may end a connect the peer accepted
  EXPECT_EQ(find_result_problem(cut, false), "");
}

TEST(ResultChecks, AFlowopTheSlaveCompletedFewerTimesIsNotOk) {
  // uperf's canfail.xml under load: the slave's mirror cut in its disconnect step, disconnects
  // short, in a run that moves no bytes and said "ok".
  RunReport r = correct_run();
  results::SlotCounters& disconnect =
      r.slaves[0].result.groups[0].transactions[2].flowops[0].stats.counters;
  disconnect.ops -= 1;
  disconnect.expired = 1;
  const std::string said =
      "operations disagree with slave slave1 in step 2: group 'g0' flowop 0 (disconnect) "
      "completed 4 and the slave's disconnect completed 3 (0 cut on the master, 1 on the slave)";
  EXPECT_EQ(find_result_problem(r, false), said);
  // Failures that found no connection do not explain it; one that can end a stream early does.
  disconnect.errors[static_cast<std::size_t>(results::ErrorKind::kNotConnected)] = 2;
  EXPECT_EQ(find_result_problem(r, false), said);
  disconnect.errors[static_cast<std::size_t>(results::ErrorKind::kReset)] = 1;
  EXPECT_EQ(find_result_problem(r, false), "");
  // A duration step's cut may leave either side an operation short (the byte rule holds there).
  RunReport timed = correct_run();
  timed.slaves[0].result.groups[0].transactions[1].flowops[0].stats.counters.ops -= 1;
  EXPECT_EQ(find_result_problem(timed, false), "");
}

TEST(ResultChecks, APacedTransactionFarBehindItsScheduleFails) {
  RunReport r = correct_run();
  // g0's rr (4 strands, 1,000 iterations done) was paced and asked for 1,125.
  r.master.result.groups[0].transactions[1].stats.counters.scheduled = 1125;
  EXPECT_EQ(find_result_problem(r, false),
            "group 0 transaction 1 fell behind its rate: 1,000 of 1,125 scheduled iterations "
            "(88.9%)");
  // --allow-empty does not excuse it.
  EXPECT_EQ(find_result_problem(r, true), find_result_problem(r, false));
  RunReport judged = r;
  judge(judged, false);
  EXPECT_EQ(judged.status, RunStatus::kFailed);
  EXPECT_EQ(judged.failure, find_result_problem(r, false));
}

TEST(ResultChecks, APacedTransactionWithinItsSlackPasses) {
  RunReport r = correct_run();
  // One iteration per strand (4) and 2% of 1,024 (20): 1,000 done of 1,024 is on schedule.
  r.master.result.groups[0].transactions[1].stats.counters.scheduled = 1024;
  EXPECT_EQ(find_result_problem(r, false), "");
  r.master.result.groups[0].transactions[1].stats.counters.scheduled = 1025;
  EXPECT_NE(find_result_problem(r, false), "");
}

TEST(PacedFellBehind, AllowsOneIterationPerStrandAndTwoPercent) {
  EXPECT_FALSE(paced_fell_behind(0, 0, 10));  // not paced, or no schedule within the step
  EXPECT_FALSE(paced_fell_behind(100, 100, 10));
  EXPECT_FALSE(paced_fell_behind(100, 120, 10));  // ahead: never behind
  EXPECT_FALSE(paced_fell_behind(100, 90, 10));   // 10 strands, one short each
  EXPECT_FALSE(paced_fell_behind(100, 88, 10));   // and 2 (2%)
  EXPECT_TRUE(paced_fell_behind(100, 87, 10));
  // 200,000 strands at 0.2 a second for 60 s: 12 each, 2,400,000 in all.
  EXPECT_FALSE(paced_fell_behind(2'400'000, 2'152'000, 200'000));
  EXPECT_TRUE(paced_fell_behind(2'400'000, 2'151'999, 200'000));
}

TEST(StoppedStrands, NoneInACorrectRun) { EXPECT_EQ(find_stopped_strands(correct_run()), ""); }

TEST(StoppedStrands, TheMastersNameTheirFirstStoppingError) {
  RunReport r = correct_run();
  r.master.result.failed_strands = 2;
  r.master.result.error_samples = {{"g0/connect/connect (strand 1)", "connect: refused", false},
                                   {"g0/disconnect/disconnect (strand 0)",
                                    "disconnect: connection (anonymous) is not open", true}};
  EXPECT_EQ(find_stopped_strands(r),
            "2 strand(s) of the master stopped on an error of a flowop without canfail, first "
            "g0/disconnect/disconnect (strand 0): disconnect: connection (anonymous) is not open");
}

TEST(StoppedStrands, ASlavesStrandThatStoppedFailsTheRunToo) {
  // The master saw nothing wrong, but the slave's mirror stopped half way: its counts fall short
  // of the master's, and the run must not say "ok" (uperf's canfail.xml under load).
  RunReport r = correct_run();
  r.slaves[0].result.failed_strands = 1;
  r.slaves[0].result.error_samples = {{"g0/disconnect/disconnect (strand 0)",
                                       "disconnect: connection (anonymous) is not open", true}};
  EXPECT_EQ(find_stopped_strands(r),
            "1 strand(s) of slave slave1 stopped on an error of a flowop without canfail, first "
            "g0/disconnect/disconnect (strand 0): disconnect: connection (anonymous) is not open");
  r.slaves[0].missing = "lost slave slave1";  // its absence is the run's failure already
  EXPECT_EQ(find_stopped_strands(r), "");
}

TEST(FailedOperations, ByKindAndSideOverAllSteps) {
  RunReport r = correct_run();
  EXPECT_EQ(failed_operations_by_kind(r), "");
  r.master.result.groups[0].transactions[0].flowops[0].stats.counters.errors[kAddrUnavailable] = 7;
  r.master.result.groups[0]
      .transactions[2]
      .flowops[0]
      .stats.counters.errors[static_cast<std::size_t>(results::ErrorKind::kNotConnected)] = 7;
  r.slaves[0]
      .result.groups[0]
      .transactions[2]
      .flowops[0]
      .stats.counters.errors[static_cast<std::size_t>(results::ErrorKind::kNotConnected)] = 7;
  EXPECT_EQ(failed_operations_by_kind(r),
            "master: not_connected 7, addr_unavailable 7; slave slave1: not_connected 7");
}

}  // namespace
}  // namespace volley::report
