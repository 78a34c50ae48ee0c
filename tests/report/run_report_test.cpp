#include "volley/report/run_report.hpp"

#include <gtest/gtest.h>

#include "report/report_fixture.hpp"
#include "volley/report/comparison.hpp"
#include "volley/report/interval_rows.hpp"
#include "volley/report/service_demand.hpp"

namespace volley::report {
namespace {

TEST(RunStatus, Names) {
  EXPECT_EQ(to_string(RunStatus::kOk), "ok");
  EXPECT_EQ(to_string(RunStatus::kFailed), "failed");
  EXPECT_EQ(to_string(RunStatus::kInterrupted), "interrupted");
}

TEST(Totals, TimedStepsOnly) {
  const RunReport r = testing::make_report();
  const Totals t = timed_totals(r.master.result, r.timed_steps);
  EXPECT_EQ(t.transactions, 1500u);
  EXPECT_EQ(t.ops, 2500u);
  EXPECT_EQ(t.bytes, 34'816'000u);
  EXPECT_EQ(t.bytes_read, 1000 * testing::kKiB);
  EXPECT_EQ(t.bytes_written, 34'816'000u - 1000 * testing::kKiB);
  EXPECT_EQ(t.expired, 3u);
  EXPECT_EQ(t.errors[static_cast<std::size_t>(results::ErrorKind::kReset)], 2u);
  EXPECT_EQ(t.error_total(), 2u);
  EXPECT_DOUBLE_EQ(t.seconds, 5.0);
  EXPECT_DOUBLE_EQ(t.transactions_per_s(), 300.0);
  EXPECT_DOUBLE_EQ(t.ops_per_s(), 500.0);
  EXPECT_DOUBLE_EQ(t.bits_per_s(), 8.0 * 34'816'000 / 5);
}

TEST(Totals, AllStepsIncludeSetUp) {
  const RunReport r = testing::make_report();
  const Totals t = all_totals(r.master.result);
  EXPECT_EQ(t.transactions, 4u + 1000 + 4 + 1 + 500);
  EXPECT_EQ(t.ops, 4u + 2000 + 4 + 1 + 500);
  EXPECT_DOUBLE_EQ(t.seconds, 6.5);
}

TEST(Totals, EmptyResultHasNoRates) {
  const Totals t = timed_totals(results::RunResult{}, {0, 1});
  EXPECT_EQ(t.transactions, 0u);
  EXPECT_EQ(t.transactions_per_s(), 0.0);
  EXPECT_EQ(t.bits_per_s(), 0.0);
}

TEST(Comparison, UperfDifferenceSign) {
  EXPECT_DOUBLE_EQ(*difference_pct(200, 198), 1.0);
  EXPECT_DOUBLE_EQ(*difference_pct(200, 202), -1.0);
  EXPECT_EQ(difference_pct(0, 0), 0.0);
  EXPECT_FALSE(difference_pct(0, 5).has_value());
}

TEST(Comparison, MasterAgainstSlave) {
  const RunReport r = testing::make_report();
  const SideComparison c = compare_with_master(r, 0);
  EXPECT_EQ(c.host, "slave1");
  EXPECT_EQ(c.master.bytes, 34'816'000u);
  EXPECT_EQ(c.slave.bytes, 34'467'840u);
  EXPECT_NEAR(*c.bytes_difference_pct, 1.0, 1e-9);
  EXPECT_NEAR(*c.ops_difference_pct, 0.4, 1e-9);
}

TEST(ServiceDemand, Arithmetic) {
  const RunReport r = testing::make_report();
  const Totals t = timed_totals(r.master.result, r.timed_steps);
  const ServiceDemand d = service_demand(*r.master.cpu, t);
  // Process: 2 CPU s = 2e6 us over 1500 transactions and 34000 KiB.
  EXPECT_NEAR(*d.process_us_per_transaction, 2e6 / 1500, 1e-6);
  EXPECT_NEAR(*d.process_us_per_kb, 2e6 / 34000, 1e-6);
  // System: 50% busy x 4 CPUs x 5 s = 10 CPU s.
  EXPECT_NEAR(*d.system_us_per_transaction, 10e6 / 1500, 1e-6);
  EXPECT_NEAR(*d.system_us_per_kb, 10e6 / 34000, 1e-6);
  // The slave has no process figures: null, not zero.
  const ServiceDemand s = service_demand(*r.slaves[0].cpu, t);
  EXPECT_FALSE(s.process_us_per_transaction.has_value());
  EXPECT_TRUE(s.system_us_per_transaction.has_value());
  // No work, no figure.
  EXPECT_FALSE(service_demand(*r.master.cpu, Totals{}).process_us_per_transaction.has_value());
}

}  // namespace
}  // namespace volley::report

namespace volley::report {
namespace {

TEST(PeerDatagrams, AddedToTheirTransactionsRowAndMerged) {
  IntervalSample s = testing::make_udp_interval();
  const auto names = testing::make_slot_names();
  // Two slaves' shares of g1/stream add up (jitter: the larger).
  EXPECT_TRUE(add_peer_datagrams(names, 1, 1, {0, 40, 2, 1, 0, 0, 900}, s));
  EXPECT_TRUE(add_peer_datagrams(names, 1, 1, {0, 57, 2, 0, 0, 1, 2'000}, s));
  // Rows in slot order: g0/connect, g0/rr, g0/disconnect, g1/idle, g1/stream.
  ASSERT_EQ(s.txns.size(), 5u);
  EXPECT_EQ(s.txns[4].peer_datagrams, (results::DatagramCounters{0, 97, 4, 1, 0, 1, 2'000}));
  EXPECT_FALSE(s.txns[1].peer_datagrams.any());
  // A transaction the master does not have is refused, not added elsewhere.
  EXPECT_FALSE(add_peer_datagrams(names, 2, 0, {1, 0, 0, 0, 0, 0, 0}, s));
  EXPECT_FALSE(add_peer_datagrams(names, 0, 9, {1, 0, 0, 0, 0, 0, 0}, s));
}

TEST(PeerDatagrams, AnIntervalsLossIsGapsMinusLate) {
  EXPECT_EQ(interval_lost({0, 95, 7, 2, 0, 0, 0}), 5);
  EXPECT_DOUBLE_EQ(interval_loss_pct({0, 95, 7, 2, 0, 0, 0}), 5.0);
  // Late arrivals filling an earlier interval's gaps: negative, so the intervals add up.
  EXPECT_EQ(interval_lost({0, 10, 1, 3, 0, 0, 0}), -2);
  EXPECT_DOUBLE_EQ(interval_loss_pct({0, 0, 0, 0, 0, 0, 0}), 0.0);
  EXPECT_DOUBLE_EQ(interval_loss_pct({0, 0, 1, 1, 0, 0, 0}), 0.0);
}

}  // namespace
}  // namespace volley::report
