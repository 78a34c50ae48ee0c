#include "volley/analysis/merge.hpp"

#include <gtest/gtest.h>

#include <random>

#include "report/report_fixture.hpp"
#include "volley/analysis/sweep_document.hpp"
#include "volley/report/json_report.hpp"
#include "volley/results/result_json.hpp"
#include "volley/results/run_result.hpp"
#include "volley/stats/latency_histogram.hpp"

namespace volley::analysis {
namespace {

using nlohmann::json;
using report::testing::make_report;

constexpr std::int64_t kSecond = 1'000'000'000;

/// Shifts every step window of both sides by `ns` (another master, started later).
void shift(report::RunReport& r, std::int64_t ns) {
  for (auto& w : r.master.result.windows) w.start_unix_ns += ns;
  for (auto& s : r.slaves) {
    for (auto& w : s.result.windows) w.start_unix_ns += ns;
  }
}

/// A run whose timed transaction (g0/rr) measured `samples`.
report::RunReport run_with_samples(const std::vector<std::uint64_t>& samples) {
  report::RunReport r = make_report();
  stats::LatencyHistogram h;
  for (const std::uint64_t ns : samples) h.record(ns);
  auto& rr = r.master.result.groups[0].transactions[1];
  rr.stats.latency = h;
  rr.stats.counters.ops = samples.size();
  return r;
}

std::vector<std::uint64_t> random_samples(std::uint64_t seed, std::size_t n, double median_ns) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> dist(std::log(median_ns), 0.8);
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<std::uint64_t>(dist(rng)));
  return out;
}

TEST(Merge, CountsAddAndPercentilesEqualOneHistogramFedEverySample) {
  // Different distributions and sizes, so averaging the two p99s would be visibly wrong.
  const auto a_samples = random_samples(1, 5000, 20'000);
  const auto b_samples = random_samples(2, 3000, 90'000);
  report::RunReport a = run_with_samples(a_samples);
  report::RunReport b = run_with_samples(b_samples);
  shift(b, 1'500'000);  // started 1.5 ms later
  stats::LatencyHistogram all;
  for (const auto ns : a_samples) all.record(ns);
  for (const auto ns : b_samples) all.record(ns);

  const MergeOutcome m = merge_run_documents(
      {{"a.json", report::to_json_document(a)}, {"b.json", report::to_json_document(b)}});
  ASSERT_EQ(m.error, "");
  EXPECT_EQ(m.warning, "");
  const json& d = m.document;
  EXPECT_EQ(d["kind"], "merge");
  EXPECT_EQ(d["masters"], 2);
  EXPECT_EQ(d["status"], "ok");
  const json& rr = d["groups"][0]["transactions"][1];
  EXPECT_EQ(rr["transactions"].get<std::uint64_t>(), a_samples.size() + b_samples.size());
  for (const char* p : {"p50", "p90", "p99", "p99_9", "p99_99", "min", "max", "count"}) {
    SCOPED_TRACE(p);
    const double pct = std::string(p) == "p50"     ? 50
                       : std::string(p) == "p90"   ? 90
                       : std::string(p) == "p99"   ? 99
                       : std::string(p) == "p99_9" ? 99.9
                                                   : 99.99;
    const std::uint64_t expected = std::string(p) == "min"     ? all.min()
                                   : std::string(p) == "max"   ? all.max()
                                   : std::string(p) == "count" ? all.count()
                                                               : all.percentile(pct);
    EXPECT_EQ(rr["latency_ns"][p].get<std::uint64_t>(), expected);
  }
  EXPECT_EQ(stats::histogram_from_json(rr["latency_ns"]["histogram"]), all);
  EXPECT_DOUBLE_EQ(rr["latency_ns"]["mean"].get<double>(), all.mean());
  // Bytes, errors, expired and the paced transaction's uncorrected latency add up too.
  const json one = report::to_json_document(a);
  const json& rr1 = one["groups"][0]["transactions"][1];
  EXPECT_EQ(rr["bytes"], 2 * rr1["bytes"].get<std::uint64_t>());
  EXPECT_EQ(rr["errors"]["reset"], 4);
  EXPECT_EQ(rr["expired"], 6);
  EXPECT_EQ(rr["flowops"][1]["errors"]["reset"], 4);
  EXPECT_EQ(rr["flowops"][0]["bytes_written"],
            2 * rr1["flowops"][0]["bytes_written"].get<std::uint64_t>());
  EXPECT_EQ(rr["latency_uncorrected_ns"]["count"], 2000);
  EXPECT_EQ(d["groups"][0]["strands"], 8);
  // The step's window runs from A's release to B's end, 1.5 ms later than A's: the rates divide
  // the sums by it, as for one master spread over processes.
  EXPECT_NEAR(rr["elapsed_s"].get<double>(), 5.0 + 0.0015, 1e-9);
  EXPECT_EQ(rr["start_unix_ns"], one["groups"][0]["transactions"][1]["start_unix_ns"]);
  EXPECT_DOUBLE_EQ(
      rr["transactions_per_s"].get<double>(),
      static_cast<double>(a_samples.size() + b_samples.size()) / rr["elapsed_s"].get<double>());
  EXPECT_EQ(d["totals"]["transactions"].get<std::uint64_t>(),
            one["totals"]["transactions"].get<std::uint64_t>() +
                report::to_json_document(b)["totals"]["transactions"].get<std::uint64_t>());
  EXPECT_EQ(d["totals"]["errors"]["total"], 4);
  EXPECT_EQ(d["totals"]["connections_established"], 10);
  // The window is the overlap: the timed step (5 s) minus the 1.5 ms B started late.
  EXPECT_NEAR(d["window"]["seconds"].get<double>(), 5.0 - 0.0015, 1e-9);
  EXPECT_NEAR(d["totals"]["seconds"].get<double>(), 5.0 + 0.0015, 1e-9);
  // CPU and NIC stay per host: both masters and both slaves, each tagged with its file.
  ASSERT_EQ(d["cpu"].size(), 4U);
  EXPECT_EQ(d["cpu"][0]["source"], "a.json");
  EXPECT_EQ(d["cpu"][0]["side"], "master");
  EXPECT_EQ(d["cpu"][3]["source"], "b.json");
  EXPECT_EQ(d["cpu"][3]["side"], "slave");
  EXPECT_EQ(d["nic"].size(), 2U);  // the slaves sent no NIC sample
  ASSERT_EQ(d["sources"].size(), 2U);
  EXPECT_EQ(d["sources"][1]["file"], "b.json");
  EXPECT_EQ(d["sources"][1]["slaves"][0]["host"], "slave1");

  const std::string text = format_merged(d);
  EXPECT_NE(text.find("volley merge: 2 masters, status ok"), std::string::npos) << text;
  EXPECT_NE(text.find("*rr"), std::string::npos) << text;
}

TEST(Merge, ThreeMastersAddUpLikeTwo) {
  const report::RunReport r = make_report();
  const json doc = report::to_json_document(r);
  const MergeOutcome m = merge_run_documents({{"a", doc}, {"b", doc}, {"c", doc}});
  ASSERT_EQ(m.error, "");
  EXPECT_EQ(m.document["totals"]["transactions"],
            3 * doc["totals"]["transactions"].get<std::uint64_t>());
  EXPECT_EQ(m.document["groups"][0]["transactions"][1]["latency_ns"]["p99"],
            doc["groups"][0]["transactions"][1]["latency_ns"]["p99"]);
}

TEST(Merge, CompareReadsAMergedDocumentAsOneRun) {
  const json doc = report::to_json_document(make_report());
  const MergeOutcome m = merge_run_documents({{"a", doc}, {"b", doc}});
  const SeriesParse parsed = series_from_document(m.document);
  ASSERT_TRUE(parsed.series.has_value()) << parsed.error;
  ASSERT_EQ(parsed.series->points.size(), 1U);
  EXPECT_EQ(parsed.series->points[0].runs[0]["totals"]["transactions"],
            2 * doc["totals"]["transactions"].get<std::uint64_t>());
}

TEST(Merge, MastersThatDidNotOverlapAreRefusedWithTheirWindows) {
  report::RunReport a = make_report();
  report::RunReport b = make_report();
  shift(b, 5 * kSecond);  // B's timed step starts exactly when A's ends
  const MergeOutcome m = merge_run_documents(
      {{"a.json", report::to_json_document(a)}, {"b.json", report::to_json_document(b)}});
  EXPECT_TRUE(m.document.is_null());
  EXPECT_NE(m.error.find("did not run at the same time"), std::string::npos) << m.error;
  EXPECT_NE(m.error.find("a.json: 2023-11-14T22:13:21.123Z to 2023-11-14T22:13:26.123Z"),
            std::string::npos)
      << m.error;
  EXPECT_NE(m.error.find("--start-at"), std::string::npos) << m.error;
}

TEST(Merge, RefusesWhatCannotBeMergedExactly) {
  const json doc = report::to_json_document(make_report());
  EXPECT_NE(merge_run_documents({{"a", doc}}).error.find("two or more"), std::string::npos);

  json other = doc;
  other["groups"][0]["transactions"][1]["name"] = "other";
  EXPECT_NE(
      merge_run_documents({{"a", doc}, {"b", other}}).error.find("did not run the same profile"),
      std::string::npos);
  other = doc;
  other["groups"][1]["transactions"][1]["flowops"][0]["type"] = "read";
  EXPECT_NE(merge_run_documents({{"a", doc}, {"b", other}}).error.find("transaction 1 of group 1"),
            std::string::npos);

  json old = doc;  // a document from before histograms were written
  old["groups"][0]["transactions"][1]["latency_ns"].erase("histogram");
  EXPECT_NE(merge_run_documents({{"a", doc}, {"b", old}}).error.find("histogram"),
            std::string::npos);
  old = doc;  // its timed step never started
  for (auto& w : old["windows"]) w["start_unix_ns"] = 0;
  EXPECT_NE(merge_run_documents({{"a", doc}, {"old", old}}).error.find("old has no start times"),
            std::string::npos);
  old = doc;  // a document from before the results were written in their own form
  for (auto& g : old["groups"]) {
    for (auto& t : g["transactions"]) t.erase("counters");
  }
  const std::string why = merge_run_documents({{"a", doc}, {"old", old}}).error;
  EXPECT_NE(why.find("old has no results volley merge can read (written by an older volley"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("/groups/0/transactions/0/counters: missing"), std::string::npos) << why;
  other = doc;
  other["timed_steps"] = json::array({0, 1});
  EXPECT_NE(merge_run_documents({{"a", doc}, {"b", other}}).error.find("the timed steps differ"),
            std::string::npos);

  const MergeOutcome merged = merge_run_documents({{"a", doc}, {"b", doc}});
  EXPECT_NE(
      merge_run_documents({{"a", doc}, {"m", merged.document}}).error.find("already a merged"),
      std::string::npos);
  EXPECT_NE(merge_run_documents({{"a", doc}, {"x", json{{"hello", 1}}}})
                .error.find("x is not a volley run result"),
            std::string::npos);
}

// `volley merge` reads each document's results back and merges them with the merge a side spread
// over processes uses: the merged document's result is exactly that merge.
TEST(Merge, TheMergedResultIsMergeIntoOfTheDocumentsResults) {
  report::RunReport a = make_report();
  report::RunReport b = make_report();
  shift(b, 2'000'000);
  stats::TcpReading reading;
  reading.rtt_us = 40;
  a.master.result.groups[0].transactions[1].stats.tcp.add(reading);
  reading.rtt_us = 90;
  b.master.result.groups[0].transactions[1].stats.tcp.add(reading);
  b.master.result.groups[1].transactions[1].flowops[0].stats.counters.datagrams.sent = 77;
  b.master.result.error_samples.push_back({"g1/stream/write", "write: Broken pipe", true});
  b.master.result.failed_strands = 1;
  const MergeOutcome m = merge_run_documents(
      {{"a.json", report::to_json_document(a)}, {"b.json", report::to_json_document(b)}});
  ASSERT_EQ(m.error, "");
  results::RunResult expected;
  results::merge_into(expected, a.master.result);
  results::merge_into(expected, b.master.result);
  std::string error;
  const auto merged = results::run_result_from_json(m.document, error);
  ASSERT_TRUE(merged.has_value()) << error;
  EXPECT_EQ(results::to_json(*merged), results::to_json(expected));
  // What adds up exactly is kept: the TCP summaries and the datagram counts too.
  const json& rr = m.document["groups"][0]["transactions"][1];
  EXPECT_EQ(rr["tcp"]["connections"], 2);
  EXPECT_EQ(rr["tcp"]["rtt_us"]["max"], 90);
  EXPECT_EQ(m.document["groups"][1]["transactions"][1]["flowops"][0]["datagrams"]["sent"], 77);
  EXPECT_EQ(m.document["failed_strands"], 1);
  EXPECT_EQ(m.document["error_samples"].size(), 1U);
  EXPECT_EQ(m.document["totals"]["processes"].size(), merged->processes.size());
}

TEST(Merge, AFailedMasterIsMergedButSaysSo) {
  report::RunReport a = make_report();
  report::RunReport b = make_report();
  b.status = report::RunStatus::kFailed;
  b.failure = "lost slave slave1";
  const MergeOutcome m = merge_run_documents(
      {{"a.json", report::to_json_document(a)}, {"b.json", report::to_json_document(b)}});
  ASSERT_EQ(m.error, "");
  EXPECT_EQ(m.document["status"], "failed");
  EXPECT_NE(m.warning.find("b.json: failed (lost slave slave1)"), std::string::npos) << m.warning;
  EXPECT_EQ(m.document["failure"], "b.json: failed (lost slave slave1)");
}

}  // namespace
}  // namespace volley::analysis
