#include "volley/report/json_report.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "report/report_fixture.hpp"
#include "volley/results/result_json.hpp"
#include "volley/report/text_report.hpp"

namespace volley::report {
namespace {

using nlohmann::json;

class JsonReport : public ::testing::Test {
 protected:
  RunReport report_ = testing::make_report();
  json doc_ = to_json_document(report_);
};

TEST_F(JsonReport, RunIdentity) {
  EXPECT_EQ(doc_["schema_version"], 2);
  EXPECT_EQ(doc_["volley_version"], "0.1.0");
  EXPECT_EQ(doc_["status"], "ok");
  EXPECT_TRUE(doc_["failure"].is_null());
  EXPECT_EQ(doc_["profile"]["name"], "pingpong");
  EXPECT_EQ(doc_["profile"]["variables"]["nthr"], "4");
  EXPECT_EQ(doc_["command_line"].size(), 4u);
  EXPECT_EQ(doc_["seed"], 42);
  EXPECT_EQ(doc_["workers"], 2);
  EXPECT_EQ(doc_["start_time"], "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(doc_["start_unix_ns"], testing::kStartUnixNs);
  EXPECT_DOUBLE_EQ(doc_["duration_s"].get<double>(), 6.5);
  EXPECT_EQ(doc_["timed_steps"], json::array({1}));
}

TEST_F(JsonReport, TransactionRatesUseTheirStepWindow) {
  const json& g0 = doc_["groups"][0];
  EXPECT_EQ(g0["name"], "g0");
  EXPECT_EQ(g0["strands"], 4);
  ASSERT_EQ(g0["transactions"].size(), 3u);
  const json& rr = g0["transactions"][1];
  EXPECT_EQ(rr["name"], "rr");
  EXPECT_EQ(rr["step"], 1);
  EXPECT_DOUBLE_EQ(rr["elapsed_s"].get<double>(), 5.0);
  EXPECT_EQ(rr["transactions"], 1000);
  EXPECT_DOUBLE_EQ(rr["transactions_per_s"].get<double>(), 1000 / 5.0);
  EXPECT_EQ(rr["ops"], 2000);  // flowop executions, not iterations
  EXPECT_EQ(rr["bytes"], 2048 * 1000);
  EXPECT_DOUBLE_EQ(rr["bits_per_s"].get<double>(), 8.0 * 2048 * 1000 / 5);
  EXPECT_EQ(rr["errors"], (json{{"reset", 2}, {"total", 2}}));
  EXPECT_EQ(rr["expired"], 3);
  // The connect step took 1 s: its rate is 4/s, not 4/5.
  EXPECT_DOUBLE_EQ(g0["transactions"][0]["transactions_per_s"].get<double>(), 4.0);
}

TEST_F(JsonReport, StepsCarryTheirStartAndLatenciesTheirHistogram) {
  const json& rr = doc_["groups"][0]["transactions"][1];
  EXPECT_EQ(rr["start_unix_ns"], testing::kStartUnixNs + 1'000'000'000);
  // The histogram reads back to exactly the one measured (volley merge relies on it).
  EXPECT_EQ(stats::histogram_from_json(rr["latency_ns"]["histogram"]),
            report_.master.result.groups[0].transactions[1].stats.latency);
  EXPECT_EQ(stats::histogram_from_json(rr["flowops"][1]["latency_ns"]["histogram"]),
            report_.master.result.groups[0].transactions[1].flowops[1].stats.latency);
  EXPECT_TRUE(rr["latency_uncorrected_ns"].contains("histogram"));
  EXPECT_TRUE(doc_["start_at"].is_null());
}

// Each side's part of the document is its result in the one JSON form (results::to_json) with
// the figures added: it reads back to the very result it was written from.
TEST_F(JsonReport, EachSideReadsBackToItsResult) {
  report_.master.result.error_samples.push_back({"g0/rr/read", "read: Connection reset", true});
  report_.master.result.failed_strands = 1;
  report_.master.result.groups[0].transactions[1].stats.counters.bytes_read = 7;  // drained
  stats::TcpReading reading;
  reading.rtt_us = 40;
  report_.master.result.groups[0].transactions[1].stats.tcp.add(reading);
  const json doc = to_json_document(report_);
  std::string error;
  const auto master = results::run_result_from_json(doc, error);
  ASSERT_TRUE(master.has_value()) << error;
  EXPECT_EQ(results::to_json(*master), results::to_json(report_.master.result));
  EXPECT_EQ(master->groups[0].transactions[1].stats.tcp,
            report_.master.result.groups[0].transactions[1].stats.tcp);
  EXPECT_EQ(master->error_samples, report_.master.result.error_samples);
  const auto slave = results::run_result_from_json(doc["slaves"][0], error);
  ASSERT_TRUE(slave.has_value()) << error;
  EXPECT_EQ(results::to_json(*slave), results::to_json(report_.slaves[0].result));
  // The figures sit beside the result's keys in the same objects.
  const json& rr = doc["groups"][0]["transactions"][1];
  EXPECT_EQ(rr["counters"]["bytes_read"], 7);
  EXPECT_TRUE(rr["latency_ns"].contains("histogram"));
  EXPECT_TRUE(rr["latency_ns"].contains("p99"));
  EXPECT_TRUE(rr["tcp"]["rtt_us"].contains("buckets"));
  EXPECT_TRUE(rr["tcp"]["rtt_us"].contains("median"));
  EXPECT_EQ(doc["windows"][1]["elapsed_ns"], 5'000'000'000);
  EXPECT_EQ(doc["failed_strands"], 1);
}

TEST_F(JsonReport, AMissingSlaveHasNoResultNotZeros) {
  report_.slaves[0].missing = "lost slave slave1: connection reset";
  report_.slaves[0].result = {};
  const json slave = to_json_document(report_)["slaves"][0];
  EXPECT_EQ(slave["missing"], "lost slave slave1: connection reset");
  EXPECT_TRUE(slave["totals"].is_null());
  EXPECT_TRUE(slave["connections_requested"].is_null());
  EXPECT_TRUE(slave["failed_strands"].is_null());
  EXPECT_TRUE(slave["groups"].is_array() && slave["groups"].empty());
  EXPECT_TRUE(slave["windows"].is_array() && slave["windows"].empty());
  std::string error;
  EXPECT_FALSE(results::run_result_from_json(slave, error).has_value());
}

TEST(JsonPretty, ReadsBackEqualWithNumberArraysOnOneLine) {
  const json j = to_json_document(testing::make_report());
  std::ostringstream out;
  write_pretty_json(j, out);
  EXPECT_EQ(json::parse(out.str()), j);
  EXPECT_NE(out.str().find("\"timed_steps\": [1],\n"), std::string::npos);
  EXPECT_NE(out.str().find("\"buckets\": [["), std::string::npos);
  std::ostringstream plain;
  write_pretty_json(json{{"a", json::array()}, {"b", json::object()}, {"c", {{{"x", 1}}}}}, plain);
  EXPECT_EQ(plain.str(),
            "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    {\n      \"x\": 1\n    }\n  ]\n}\n");
}

TEST_F(JsonReport, StartAtRecordsHowFarTheTimedPartBeganFromIt) {
  RunReport r = testing::make_report();
  r.start_at_unix_ns = testing::kStartUnixNs + 1'000'000'000 - 250'000;  // 0.25 ms before
  const json doc = to_json_document(r);
  EXPECT_EQ(doc["start_at"]["requested"], "2023-11-14T22:13:21.123Z");
  EXPECT_EQ(doc["start_at"]["requested_unix_ns"], *r.start_at_unix_ns);
  EXPECT_EQ(doc["start_at"]["actual_unix_ns"], testing::kStartUnixNs + 1'000'000'000);
  EXPECT_EQ(doc["start_at"]["offset_ns"], 250'000);
  const std::string text = format_final_report(r);
  EXPECT_NE(text.find("start at 2023-11-14T22:13:21.123Z: timed part began +0.250 ms from it"),
            std::string::npos)
      << text;
}

TEST_F(JsonReport, LatencyPercentilesAreOrdered) {
  const json& lat = doc_["groups"][0]["transactions"][1]["latency_ns"];
  EXPECT_EQ(lat["count"], 1000);
  EXPECT_EQ(lat["min"], 20'000);
  EXPECT_EQ(lat["max"], 1'000'000);
  EXPECT_NEAR(lat["p50"].get<double>(), 20'000, 20'000 * 0.004);
  EXPECT_NEAR(lat["p99"].get<double>(), 50'000, 50'000 * 0.004);
  const double mean = (900 * 20'000.0 + 90 * 50'000.0 + 10 * 1e6) / 1000;
  EXPECT_DOUBLE_EQ(lat["mean"].get<double>(), mean);
  EXPECT_GT(lat["stddev"].get<double>(), 0);
  const char* order[] = {"min", "p50", "p90", "p99", "p99_9", "p99_99", "max"};
  for (std::size_t i = 1; i < std::size(order); ++i) {
    EXPECT_LE(lat[order[i - 1]].get<std::uint64_t>(), lat[order[i]].get<std::uint64_t>())
        << order[i - 1] << " <= " << order[i];
  }
}

TEST_F(JsonReport, UncorrectedLatencyOnlyForPacedTransactions) {
  const json& txns = doc_["groups"][0]["transactions"];
  EXPECT_TRUE(txns[1].contains("latency_uncorrected_ns"));
  EXPECT_EQ(txns[1]["latency_uncorrected_ns"]["p50"], 15'000);
  EXPECT_FALSE(txns[0].contains("latency_uncorrected_ns"));
}

TEST_F(JsonReport, Flowops) {
  const json& read = doc_["groups"][0]["transactions"][1]["flowops"][1];
  EXPECT_EQ(read["type"], "read");
  EXPECT_EQ(read["ops"], 1000);
  EXPECT_EQ(read["bytes"], 1024 * 1000);
  EXPECT_EQ(read["bytes_read"], 1024 * 1000);
  EXPECT_EQ(read["bytes_written"], 0);
  EXPECT_EQ(read["expired"], 3);
  EXPECT_EQ(read["errors"], (json{{"reset", 2}, {"total", 2}}));
  EXPECT_DOUBLE_EQ(read["ops_per_s"].get<double>(), 200.0);
  EXPECT_DOUBLE_EQ(read["bytes_per_s"].get<double>(), 1024 * 200.0);
  EXPECT_EQ(read["latency_ns"]["p50"], 12'000);
  const json& write = doc_["groups"][0]["transactions"][1]["flowops"][0];
  EXPECT_EQ(write["errors"], (json{{"total", 0}}));
}

// A transaction's TCP figures: gauges as {n, min, median, max}, counts summed, shares; left
// out of a transaction without TCP connections, as are gauges no connection had; and shown in
// the text report's TCP section.
TEST(JsonReportTcp, ATransactionsConnectionsAsTcpInfoSawThem) {
  RunReport r = testing::make_report();
  stats::TcpSummary& tcp = r.master.result.groups[0].transactions[1].stats.tcp;
  for (const std::uint64_t rtt : {40U, 50U, 90U}) {
    stats::TcpReading reading;
    reading.rtt_us = rtt;
    reading.cwnd = 10;
    reading.busy_us = 1000;
    reading.rwnd_limited_us = 250;
    reading.segs_out = 1000;
    reading.retransmits = 5;
    tcp.add(reading);
  }
  const json doc = to_json_document(r);
  const json& t = doc["groups"][0]["transactions"][1]["tcp"];
  EXPECT_EQ(t["connections"], 3);
  EXPECT_EQ(t["rtt_us"]["n"], 3);
  EXPECT_EQ(t["rtt_us"]["min"], 40);
  EXPECT_NEAR(t["rtt_us"]["median"].get<double>(), 50.0, 0.5);
  EXPECT_EQ(t["rtt_us"]["max"], 90);
  EXPECT_FALSE(t.contains("ssthresh"));  // no connection had one
  EXPECT_EQ(t["busy_us"], 3000);
  EXPECT_DOUBLE_EQ(t["rwnd_limited_pct"].get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(t["retransmit_pct"].get<double>(), 0.5);
  EXPECT_FALSE(doc["groups"][0]["transactions"][0].contains("tcp"));
  const std::string text = format_final_report(r);
  EXPECT_NE(text.find("TCP at each transaction's end"), std::string::npos) << text;
  EXPECT_NE(text.find("25.0%"), std::string::npos) << text;
}

TEST_F(JsonReport, TotalsCoverTheTimedPartOnly) {
  const json& t = doc_["totals"];
  EXPECT_EQ(t["transactions"], 1500);
  EXPECT_DOUBLE_EQ(t["transactions_per_s"].get<double>(), 300.0);
  EXPECT_EQ(t["ops"], 2500);
  EXPECT_DOUBLE_EQ(t["ops_per_s"].get<double>(), 500.0);
  EXPECT_EQ(t["bytes"], 34'816'000);
  EXPECT_DOUBLE_EQ(t["bytes_per_s"].get<double>(), 34'816'000 / 5.0);
  EXPECT_DOUBLE_EQ(t["bits_per_s"].get<double>(), 8 * 34'816'000 / 5.0);
  EXPECT_DOUBLE_EQ(t["seconds"].get<double>(), 5.0);
  EXPECT_EQ(t["connections_requested"], 5);
  EXPECT_EQ(t["connections_established"], 5);
  EXPECT_EQ(t["errors"]["total"], 2);
  EXPECT_EQ(t["errors"]["reset"], 2);
  EXPECT_EQ(t["errors"]["refused"], 0);  // every kind, for stable keys
  EXPECT_EQ(t["expired"], 3);
}

TEST_F(JsonReport, SlavesAndComparison) {
  ASSERT_EQ(doc_["slaves"].size(), 1u);
  EXPECT_EQ(doc_["slaves"][0]["host"], "slave1");
  EXPECT_EQ(doc_["slaves"][0]["totals"]["ops"], 2490);
  EXPECT_EQ(doc_["slaves"][0]["groups"].size(), 2u);
  ASSERT_EQ(doc_["comparison"].size(), 1u);
  const json& c = doc_["comparison"][0];
  EXPECT_EQ(c["host"], "slave1");
  EXPECT_EQ(c["master_bytes"], 34'816'000);
  EXPECT_EQ(c["slave_bytes"], 34'467'840);
  EXPECT_NEAR(c["bytes_difference_pct"].get<double>(), 1.0, 1e-9);
  EXPECT_EQ(c["master_ops"], 2500);
  EXPECT_EQ(c["slave_ops"], 2490);
  EXPECT_NEAR(c["ops_difference_pct"].get<double>(), 0.4, 1e-9);
}

TEST_F(JsonReport, CpuWithServiceDemand) {
  const json& local = doc_["cpu"]["local"];
  EXPECT_EQ(local["host"], "master");
  EXPECT_DOUBLE_EQ(local["total"]["busy_pct"].get<double>(), 50.0);
  EXPECT_EQ(local["hottest_cpu"]["cpu"], 0);
  const json& sd = local["service_demand"];
  EXPECT_NEAR(sd["process_us_per_transaction"].get<double>(), 2e6 / 1500, 1e-6);
  EXPECT_NEAR(sd["system_us_per_transaction"].get<double>(), 10e6 / 1500, 1e-6);
  EXPECT_NEAR(sd["process_us_per_kb"].get<double>(), 2e6 / 34000, 1e-6);
  EXPECT_NEAR(sd["system_us_per_kb"].get<double>(), 10e6 / 34000, 1e-6);
  ASSERT_EQ(doc_["cpu"]["remote"].size(), 1u);
  EXPECT_EQ(doc_["cpu"]["remote"][0]["host"], "slave1");
  EXPECT_TRUE(doc_["cpu"]["remote"][0]["service_demand"]["process_us_per_transaction"].is_null());
}

TEST_F(JsonReport, Nic) {
  EXPECT_EQ(doc_["nic"]["local"]["host"], "master");
  EXPECT_DOUBLE_EQ(doc_["nic"]["local"]["interfaces"]["eth0"]["rx_bits_per_s"].get<double>(), 8e6);
  ASSERT_EQ(doc_["nic"]["remote"].size(), 1u);
  EXPECT_TRUE(doc_["nic"]["remote"][0].is_null());
}

TEST_F(JsonReport, KernelCounters) {
  const json& local = doc_["kernel"]["local"];
  EXPECT_EQ(local["host"], "master");
  EXPECT_DOUBLE_EQ(local["wall_s"].get<double>(), 5.0);
  EXPECT_EQ(local["counters"]["Tcp.RetransSegs"], 42);
  EXPECT_EQ(local["counters"]["Udp.RcvbufErrors"], 1000);
  EXPECT_EQ(local["counters"]["TcpExt.ListenOverflows"], 0);  // did not move: still there
  EXPECT_FALSE(local["counters"].contains("TcpExt.TCPZeroWindowDrop"));
  EXPECT_EQ(local["absent"], json::array({"TcpExt.TCPZeroWindowDrop"}));
  EXPECT_EQ(local["softnet"]["processed"], 500);
  EXPECT_EQ(local["softnet"]["per_cpu"].size(), 2u);
  ASSERT_EQ(doc_["kernel"]["remote"].size(), 1u);
  EXPECT_TRUE(doc_["kernel"]["remote"][0].is_null());
}

TEST_F(JsonReport, Intervals) {
  const json& iv = doc_["intervals"];
  ASSERT_EQ(iv.size(), 3u);
  EXPECT_EQ(iv[0]["start_unix_ns"], testing::kStartUnixNs + 1'000'000'000);
  EXPECT_DOUBLE_EQ(iv[0]["t_s"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(iv[0]["length_s"].get<double>(), 1.0);
  EXPECT_EQ(iv[0]["step"], 1);
  ASSERT_EQ(iv[0]["transactions"].size(), 2u);
  const json& rr = iv[0]["transactions"][0];
  EXPECT_EQ(rr["name"], "g0/rr");
  EXPECT_EQ(rr["transactions"], 200);
  EXPECT_DOUBLE_EQ(rr["transactions_per_s"].get<double>(), 200.0);
  EXPECT_EQ(rr["ops"], 400);
  EXPECT_DOUBLE_EQ(rr["ops_per_s"].get<double>(), 400.0);
  EXPECT_EQ(rr["bytes"], 400 * 1024);
  EXPECT_DOUBLE_EQ(rr["bits_per_s"].get<double>(), 8.0 * 400 * 1024);
  EXPECT_EQ(rr["errors"], 0);
  EXPECT_EQ(rr["latency_ns"]["p50"], 20'000);
  // A stall in the running timed step still has its row; idle transactions elsewhere do not.
  ASSERT_EQ(iv[1]["transactions"].size(), 2u);
  EXPECT_EQ(iv[1]["transactions"][0]["name"], "g0/rr");
  EXPECT_EQ(iv[1]["transactions"][0]["transactions"], 0);
  ASSERT_EQ(iv[2]["transactions"].size(), 1u);
  EXPECT_EQ(iv[2]["transactions"][0]["name"], "g0/disconnect");
}

TEST(JsonReportIntervals, UdpBothSidesPerDirection) {
  RunReport r = testing::make_report();
  r.intervals = {testing::make_udp_interval_with_slaves()};
  const json doc = to_json_document(r);
  const json& iv = doc["intervals"][0];
  EXPECT_EQ(iv["slave_counts"], (json{{"asked", 1}, {"answered", 1}, {"missing", nullptr}}));
  ASSERT_EQ(iv["transactions"].size(), 2u);
  // g0/rr: the master read what the slave sent.
  const json& rr = iv["transactions"][0];
  EXPECT_EQ(rr["datagrams"]["received"], 95);
  EXPECT_EQ(rr["datagrams"]["lost"], 5);
  EXPECT_EQ(rr["slave_datagrams"]["sent"], 100);
  ASSERT_EQ(rr["udp"].size(), 1u);
  EXPECT_EQ(rr["udp"][0], (json{{"way", "s->m"},
                                {"sent", 100},
                                {"received", 95},
                                {"gaps", 7},
                                {"late", 2},
                                {"lost", 5},
                                {"loss_pct", 5.0},
                                {"duplicates", 1},
                                {"timeouts", 3},
                                {"jitter_ns", 1500}}));
  // g1/stream: the slave received what the master sent.
  const json& stream = iv["transactions"][1];
  ASSERT_EQ(stream["udp"].size(), 1u);
  EXPECT_EQ(stream["udp"][0], (json{{"way", "m->s"},
                                    {"sent", 100},
                                    {"received", 97},
                                    {"gaps", 4},
                                    {"late", 1},
                                    {"lost", 3},
                                    {"loss_pct", 3.0},
                                    {"duplicates", 0},
                                    {"timeouts", 0},
                                    {"jitter_ns", 2000}}));

  // A slave's counts missing: its side is null or says why, never 0.
  r.intervals[0].peers = {1, 0, "no counts from slave h1"};
  const json missing = to_json_document(r)["intervals"][0];
  EXPECT_EQ(missing["slave_counts"]["missing"], "no counts from slave h1");
  EXPECT_FALSE(missing["transactions"][0].contains("slave_datagrams"));
  EXPECT_TRUE(missing["transactions"][0]["udp"][0]["sent"].is_null());
  EXPECT_EQ(missing["transactions"][1]["udp"][0]["receiver_missing"], "no counts from slave h1");
  EXPECT_FALSE(missing["transactions"][1]["udp"][0].contains("received"));
}

TEST(JsonReportStatus, FailedRun) {
  RunReport r = testing::make_report();
  r.status = RunStatus::kFailed;
  r.failure = "slave1: connection refused";
  const json doc = to_json_document(r);
  EXPECT_EQ(doc["status"], "failed");
  EXPECT_EQ(doc["failure"], "slave1: connection refused");
  r.status = RunStatus::kInterrupted;
  EXPECT_EQ(to_json_document(r)["status"], "interrupted");
}

TEST(JsonReportStatus, EmptyReportIsCompleteAndValid) {
  RunReport r;
  r.status = RunStatus::kFailed;
  r.failure = "profile not found";
  std::ostringstream out;
  write_json_document(r, out);
  const json doc = json::parse(out.str());  // throws (fails the test) if invalid
  for (const char* key : {"schema_version",
                          "volley_version",
                          "status",
                          "failure",
                          "profile",
                          "command_line",
                          "seed",
                          "workers",
                          "start_time",
                          "start_unix_ns",
                          "duration_s",
                          "timed_steps",
                          "start_at",
                          "groups",
                          "totals",
                          "slaves",
                          "comparison",
                          "comparison_sum",
                          "cpu",
                          "nic",
                          "kernel",
                          "bottlenecks",
                          "system",
                          "intervals",
                          "windows",
                          "connections_requested",
                          "connections_established",
                          "failed_strands",
                          "error_samples",
                          "processes",
                          "io"}) {
    EXPECT_TRUE(doc.contains(key)) << key;
  }
  EXPECT_EQ(doc.size(), 31u);
  EXPECT_TRUE(doc["start_at"].is_null());
  EXPECT_TRUE(doc["system"]["local"].is_null());
  EXPECT_TRUE(doc["system"]["remote"].is_array() && doc["system"]["remote"].empty());
  EXPECT_TRUE(doc["start_time"].is_null());
  EXPECT_TRUE(doc["profile"]["name"].is_null());
  EXPECT_TRUE(doc["groups"].is_array() && doc["groups"].empty());
  EXPECT_TRUE(doc["slaves"].empty());
  EXPECT_TRUE(doc["intervals"].empty());
  EXPECT_TRUE(doc["cpu"]["local"].is_null());
  EXPECT_TRUE(doc["cpu"]["remote"].is_array());
  EXPECT_TRUE(doc["nic"]["local"].is_null());
  EXPECT_TRUE(doc["kernel"]["local"].is_null());
  EXPECT_TRUE(doc["kernel"]["remote"].is_array());
  EXPECT_EQ(doc["totals"]["transactions"], 0);
  EXPECT_EQ(doc["totals"]["transactions_per_s"], 0.0);
}

TEST(JsonReportStatus, PrettyWithTrailingNewline) {
  std::ostringstream out;
  write_json_document(testing::make_report(), out);
  const std::string text = out.str();
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.substr(0, 5), "{\n  \"");
  EXPECT_TRUE(json::accept(text));
}

TEST(Iso8601, MillisecondsUtc) {
  EXPECT_EQ(iso8601_utc_ms(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(iso8601_utc_ms(951'782'400'999'999'999), "2000-02-29T00:00:00.999Z");
}

}  // namespace
}  // namespace volley::report
