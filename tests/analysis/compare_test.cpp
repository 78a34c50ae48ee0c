#include "volley/analysis/compare.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace volley::analysis {
namespace {

using nlohmann::json;

/// The parts of a run document the comparison reads.
json compared_run(double tps, double p99) {
  json timed = {{"step", 0}, {"latency_ns", {{"p50", p99 / 2}, {"p99", p99}, {"p99_9", p99}}}};
  return json{{"status", "ok"},
              {"timed_steps", {0}},
              {"groups", {{{"transactions", {timed}}}}},
              {"totals", {{"transactions_per_s", tps}, {"errors", {{"total", 0}}}}},
              {"cpu", {{"local", nullptr}, {"remote", json::array()}}}};
}

Series series(const std::vector<std::pair<int, std::vector<double>>>& tps_per_value,
              json snapshot = json{{"sysctl", {{"net.core.busy_read", "0"}}}}) {
  Series s;
  s.vary_name = "t";
  for (const auto& [value, rates] : tps_per_value) {
    SweepPoint p{value, {}};
    for (const double r : rates) p.runs.push_back(compared_run(r, 1e6 / r));
    s.points.push_back(std::move(p));
  }
  s.system_local = std::move(snapshot);
  return s;
}

const MetricComparison& find(const PointComparison& p, Metric m) {
  for (const auto& c : p.metrics) {
    if (c.metric == m) return c;
  }
  throw std::runtime_error("metric not compared");
}

TEST(CompareMetricTest, DirectionDecidesBetterOrWorse) {
  const auto up = compare_metric(Metric::kTransactionsPerS, {100, 101, 99}, {200, 201, 199});
  EXPECT_EQ(up.verdict, Verdict::kBetter);
  EXPECT_TRUE(up.significant);
  EXPECT_NEAR(*up.change_pct, 100.0, 1e-9);
  const auto slower = compare_metric(Metric::kP99Ns, {100, 101, 99}, {200, 201, 199});
  EXPECT_EQ(slower.verdict, Verdict::kWorse);
}

// Host CPU busy follows the work done: less of it after a change that did 44% fewer
// transactions is not "better". The per-transaction figure (service demand) is the one judged.
TEST(CompareMetricTest, CpuBusyIsNeverBetterOrWorse) {
  for (const Metric m : {Metric::kCpuBusyPctLocal, Metric::kCpuBusyPctRemote}) {
    const auto lower = compare_metric(m, {90, 91, 89}, {50, 51, 49});
    EXPECT_TRUE(lower.significant);
    EXPECT_EQ(lower.verdict, Verdict::kChanged);
    const auto higher = compare_metric(m, {50, 51, 49}, {90, 91, 89});
    EXPECT_EQ(higher.verdict, Verdict::kChanged);
  }
  const auto cheaper = compare_metric(Metric::kServiceDemandLocal, {10, 10.1, 9.9}, {5, 5.1, 4.9});
  EXPECT_EQ(cheaper.verdict, Verdict::kBetter);
}

TEST(CompareMetricTest, EveryMetricHasADirectionThatMatchesItsMeaning) {
  EXPECT_EQ(info(Metric::kTransactionsPerS).better, Better::kHigher);
  for (const Metric m :
       {Metric::kP50Ns, Metric::kP99Ns, Metric::kP99_9Ns, Metric::kServiceDemandLocal,
        Metric::kServiceDemandRemote, Metric::kErrors}) {
    EXPECT_EQ(info(m).better, Better::kLower) << info(m).label;
  }
  EXPECT_EQ(info(Metric::kCpuBusyPctLocal).better, Better::kNotJudged);
  EXPECT_EQ(info(Metric::kCpuBusyPctRemote).better, Better::kNotJudged);
}

TEST(CompareMetricTest, NoiseIsNoSignificantChange) {
  const auto c = compare_metric(Metric::kTransactionsPerS, {100, 120, 80}, {105, 125, 85});
  EXPECT_FALSE(c.significant);
  ASSERT_TRUE(c.p_value);
  EXPECT_GT(*c.p_value, 0.05);
  EXPECT_EQ(c.verdict, Verdict::kNoSignificantChange);
}

TEST(CompareMetricTest, TooFewRepeatsIsUnknownWhateverTheChange) {
  const auto c = compare_metric(Metric::kTransactionsPerS, {100}, {1000, 1001});
  EXPECT_EQ(c.verdict, Verdict::kUnknown);
  EXPECT_FALSE(c.p_value);
  EXPECT_NEAR(*c.change_pct, 900.5, 1e-9);
}

TEST(CompareSeriesTest, ItselfIsNoSignificantChangeEverywhere) {
  const Series s = series({{1, {100, 110, 105}}, {4, {300, 290, 310}}});
  const Comparison c = compare_series(s, s);
  ASSERT_EQ(c.points.size(), 2U);
  for (const auto& p : c.points) {
    ASSERT_FALSE(p.metrics.empty());
    for (const auto& m : p.metrics) EXPECT_EQ(m.verdict, Verdict::kNoSignificantChange);
  }
  EXPECT_FALSE(worse_beyond(c, 0));
  const std::string text = format_comparison(c);
  EXPECT_NE(text.find("no significant change"), std::string::npos);
  EXPECT_NE(text.find("no differences"), std::string::npos);
  EXPECT_EQ(text.find("worse"), std::string::npos);
}

TEST(CompareSeriesTest, MatchesByValueAndReportsTheRest) {
  const Series base = series({{1, {100, 101, 99}}, {4, {300, 301, 299}}});
  const Series next = series({{4, {150, 151, 149}}, {16, {500, 501, 502}}},
                             json{{"sysctl", {{"net.core.busy_read", "50"}}}});
  const Comparison c = compare_series(base, next);
  ASSERT_EQ(c.points.size(), 1U);
  EXPECT_EQ(c.points[0].value, 4);
  EXPECT_EQ(find(c.points[0], Metric::kTransactionsPerS).verdict, Verdict::kWorse);
  EXPECT_EQ(find(c.points[0], Metric::kP99Ns).verdict, Verdict::kWorse);
  EXPECT_EQ(c.only_in_base, std::vector<json>{1});
  EXPECT_EQ(c.only_in_new, std::vector<json>{16});
  ASSERT_EQ(c.snapshot_differences.size(), 1U);
  EXPECT_EQ(c.snapshot_differences[0].to_string(), "sysctl.net.core.busy_read: 0 -> 50");
  // 50% fewer transactions/s and p99 about +100%: fails a 60% gate, passes a 110% one.
  EXPECT_TRUE(worse_beyond(c, 60));
  EXPECT_FALSE(worse_beyond(c, 110));
  const std::string text = format_comparison(c);
  EXPECT_NE(text.find("sysctl.net.core.busy_read: 0 -> 50"), std::string::npos);
  EXPECT_NE(text.find("only in NEW: t=16"), std::string::npos);
}

TEST(CompareSeriesTest, SingleRunsAreUnknownAndMissingSnapshotIsSaid) {
  const Series base = series({{1, {100}}}, nullptr);
  const Series next = series({{1, {50}}});
  const Comparison c = compare_series(base, next);
  ASSERT_EQ(c.points.size(), 1U);
  EXPECT_EQ(find(c.points[0], Metric::kTransactionsPerS).verdict, Verdict::kUnknown);
  EXPECT_FALSE(worse_beyond(c, 0));  // unknown is never "worse"
  const std::string text = format_comparison(c);
  EXPECT_NE(text.find("not enough repeats to tell"), std::string::npos);
  EXPECT_NE(text.find("no snapshot in BASE"), std::string::npos);
}

TEST(CompareSeriesTest, FallingThroughputWithLessCpuIsWorseNotBetter) {
  Series base = series({{1, {43000, 43100, 42900}}});
  Series next = series({{1, {24000, 24100, 23900}}});
  for (auto& run : base.points[0].runs) run["cpu"]["local"] = {{"total", {{"busy_pct", 90.0}}}};
  for (auto& run : next.points[0].runs) run["cpu"]["local"] = {{"total", {{"busy_pct", 50.0}}}};
  const Comparison c = compare_series(base, next);
  ASSERT_EQ(c.points.size(), 1U);
  EXPECT_EQ(find(c.points[0], Metric::kTransactionsPerS).verdict, Verdict::kWorse);
  EXPECT_EQ(find(c.points[0], Metric::kCpuBusyPctLocal).verdict, Verdict::kChanged);
  const std::string text = format_comparison(c);
  EXPECT_EQ(text.find("better"), std::string::npos) << text;
  EXPECT_NE(text.find("changed, not judged"), std::string::npos) << text;
}

// Two runs a side: a t-test can only see a large change, and a 95% interval from two values is
// 12.7 standard errors wide. The comparison says so, and how to get a judgment.
TEST(CompareSeriesTest, TooFewRepeatsAreSaidWithWhatToDo) {
  const Comparison two = compare_series(series({{1, {100, 101}}}), series({{1, {100, 102}}}));
  EXPECT_EQ(two.fewest_repeats, 2U);
  const std::string text = format_comparison(two);
  EXPECT_NE(text.find("too few repeats"), std::string::npos) << text;
  EXPECT_NE(text.find("-n 5"), std::string::npos) << text;
  const Comparison five = compare_series(series({{1, {100, 101, 99, 100, 102}}}),
                                         series({{1, {100, 102, 98, 101, 100}}}));
  EXPECT_EQ(five.fewest_repeats, 5U);
  EXPECT_EQ(format_comparison(five).find("too few repeats"), std::string::npos);
}

TEST(CompareSeriesTest, CurrentFrequenciesAreNotSettings) {
  const Series base = series({{1, {100, 101}}}, json{{"cpu", {{"cur_freq_khz", {{"cpu0", 1}}}}}});
  const Series next = series({{1, {100, 101}}}, json{{"cpu", {{"cur_freq_khz", {{"cpu0", 2}}}}}});
  EXPECT_TRUE(compare_series(base, next).snapshot_differences.empty());
}

}  // namespace
}  // namespace volley::analysis
