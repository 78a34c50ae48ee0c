#include "volley/analysis/run_metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "volley/analysis/sweep_document.hpp"

namespace volley::analysis {
namespace {

using nlohmann::json;

/// The parts of a run document (report::to_json_document) the metrics read.
json fake_run(double tps, double p99, const char* status = "ok") {
  json connect = {{"step", 0}, {"latency_ns", {{"p50", 1}, {"p99", 2}, {"p99_9", 3}}}};
  json timed = {{"step", 1}, {"latency_ns", {{"p50", p99 / 2}, {"p99", p99}, {"p99_9", p99 * 2}}}};
  return json{{"status", status},
              {"timed_steps", {1}},
              {"groups", {{{"transactions", {connect, timed}}}}},
              {"totals", {{"transactions_per_s", tps}, {"errors", {{"total", 0}}}}},
              {"cpu",
               {{"local",
                 {{"total", {{"busy_pct", 40.0}}},
                  {"service_demand", {{"process_us_per_transaction", 10.0}}}}},
                {"remote",
                 {{{"total", {{"busy_pct", 50.0}}},
                   {"service_demand", {{"process_us_per_transaction", 12.0}}}},
                  nullptr}}}}};
}

TEST(RunMetricsTest, ReadsTheTimedTransaction) {
  const RunMetrics m = run_metrics(fake_run(1000, 4000));
  EXPECT_EQ(m[Metric::kTransactionsPerS], 1000.0);
  EXPECT_EQ(m[Metric::kP50Ns], 2000.0);
  EXPECT_EQ(m[Metric::kP99Ns], 4000.0);
  EXPECT_EQ(m[Metric::kP99_9Ns], 8000.0);
  EXPECT_EQ(m[Metric::kCpuBusyPctLocal], 40.0);
  EXPECT_EQ(m[Metric::kCpuBusyPctRemote], 50.0);  // the null slave is left out
  EXPECT_EQ(m[Metric::kServiceDemandLocal], 10.0);
  EXPECT_EQ(m[Metric::kServiceDemandRemote], 12.0);
  EXPECT_EQ(m[Metric::kErrors], 0.0);
}

TEST(RunMetricsTest, MissingPartsAreNullopt) {
  json run = fake_run(1000, 4000);
  run["cpu"] = json{{"local", nullptr}, {"remote", json::array()}};
  run.erase("timed_steps");
  const RunMetrics m = run_metrics(run);
  EXPECT_EQ(m[Metric::kTransactionsPerS], 1000.0);
  EXPECT_FALSE(m[Metric::kP99Ns]);
  EXPECT_FALSE(m[Metric::kCpuBusyPctLocal]);
  EXPECT_FALSE(m[Metric::kServiceDemandRemote]);
  EXPECT_FALSE(run_metrics(json("nonsense"))[Metric::kTransactionsPerS]);
}

TEST(SummarizeRunsTest, MeanAndConfidenceIntervalOverOkRuns) {
  const std::vector<json> runs{fake_run(100, 1000), fake_run(110, 2000), fake_run(120, 3000),
                               fake_run(5, 99999, "failed")};
  const PointSummary s = summarize_runs(runs);
  EXPECT_EQ(s.n, 3U);
  EXPECT_DOUBLE_EQ(s.tps_mean, 110.0);
  EXPECT_DOUBLE_EQ(s.tps_stddev, 10.0);
  // t(0.975, 2) = 4.302652729749464; half width = t * 10 / sqrt(3).
  EXPECT_NEAR(s.tps_ci95_high - 110.0, 4.302652729749464 * 10 / std::sqrt(3.0), 1e-9);
  EXPECT_NEAR(110.0 - s.tps_ci95_low, 4.302652729749464 * 10 / std::sqrt(3.0), 1e-9);
  EXPECT_DOUBLE_EQ(*s.mean(Metric::kP99Ns), 2000.0);
  const json j = to_json(s);
  EXPECT_EQ(j["transactions_per_s"]["n"], 3);
  EXPECT_DOUBLE_EQ(j["p99_ns"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(j["service_demand_us_per_txn_remote"].get<double>(), 12.0);
}

TEST(SummarizeRunsTest, OneRunHasNoInterval) {
  const PointSummary s = summarize_runs({fake_run(100, 1000)});
  EXPECT_EQ(s.n, 1U);
  EXPECT_DOUBLE_EQ(s.tps_mean, 100.0);
  EXPECT_TRUE(std::isnan(s.tps_ci95_low));
  const json j = to_json(s);
  EXPECT_TRUE(j["transactions_per_s"]["ci95_low"].is_null());
  EXPECT_TRUE(j["transactions_per_s"]["stddev"].is_null());
}

TEST(SweepDocumentTest, RoundTripsThroughSeries) {
  SweepInfo info{"0.1.0", "t", ValueSpacing::kGeometric, 2, json{{"hostname", "x"}}};
  const std::vector<SweepPoint> points{
      {value_json("1"), {fake_run(100, 1000), fake_run(102, 1000)}},
      {value_json("4"), {fake_run(300, 2000), fake_run(310, 2000)}}};
  const json doc = make_sweep_document(info, points);
  EXPECT_EQ(doc["kind"], "sweep");
  EXPECT_EQ(doc["vary"]["values"], json::array({1, 4}));
  // The fake runs carry no slave snapshot: an empty list, not a guess.
  EXPECT_TRUE(doc["system"]["remote"].is_array() && doc["system"]["remote"].empty());
  EXPECT_DOUBLE_EQ(doc["points"][1]["summary"]["transactions_per_s"]["mean"].get<double>(), 305.0);
  const SeriesParse back = series_from_document(doc);
  ASSERT_TRUE(back.series) << back.error;
  EXPECT_EQ(back.series->vary_name, "t");
  EXPECT_TRUE(back.series->log_x);
  ASSERT_EQ(back.series->points.size(), 2U);
  EXPECT_EQ(back.series->points[1].runs.size(), 2U);
  EXPECT_EQ(back.series->system_local["hostname"], "x");
}

TEST(SweepDocumentTest, SingleRunIsOnePointAndBadShapesFail) {
  const SeriesParse single = series_from_document(fake_run(100, 1000));
  ASSERT_TRUE(single.series) << single.error;
  ASSERT_EQ(single.series->points.size(), 1U);
  EXPECT_TRUE(single.series->points[0].value.is_null());
  EXPECT_FALSE(series_from_document(json::array()).series);
  EXPECT_FALSE(series_from_document(json{{"a", 1}}).series);
  EXPECT_FALSE(series_from_document(json{{"kind", "other"}}).series);
  EXPECT_FALSE(series_from_document(json{{"kind", "sweep"}}).series);
  EXPECT_FALSE(series_from_document(json{{"kind", "sweep"}, {"points", {{{"value", 1}}}}}).series);
}

TEST(SweepDocumentTest, LogAxisChoice) {
  EXPECT_TRUE(use_log_axis({1, 4, 16, 64}, ValueSpacing::kList));
  EXPECT_TRUE(use_log_axis({1, 2}, ValueSpacing::kGeometric));
  EXPECT_FALSE(use_log_axis({1, 2, 3, 4}, ValueSpacing::kList));
  EXPECT_TRUE(use_log_axis({1, 2, 300}, ValueSpacing::kList));
  EXPECT_FALSE(use_log_axis({0, 1, 2}, ValueSpacing::kGeometric));
  EXPECT_FALSE(use_log_axis({"tcp", "udp"}, ValueSpacing::kList));
}

}  // namespace
}  // namespace volley::analysis
