// A result's one JSON form: every field written reads back the same; what is missing, of the
// wrong type or out of range is an error value naming where it is.
#include "volley/results/result_json.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace volley::results {
namespace {

using nlohmann::json;

SlotStats stats_with(std::uint64_t ops, std::initializer_list<std::uint64_t> latencies) {
  SlotStats s;
  s.counters.ops = ops;
  s.counters.bytes_read = ops * 10;
  s.counters.bytes_written = ops * 20 + 1;
  s.counters.expired = 2;
  for (std::size_t i = 0; i < s.counters.errors.size(); ++i) s.counters.errors[i] = i * 3;
  for (auto v : latencies) s.latency.record(v);
  return s;
}

DatagramCounters datagrams() {
  DatagramCounters d;
  d.sent = 1000;
  d.received = 990;
  d.lost = 12;
  d.late = 2;
  d.duplicates = 1;
  d.timeouts = 3;
  d.jitter_ns = 4567;
  return d;
}

RunResult sample_result() {
  RunResult r;
  TxnResult txn{"txn1", stats_with(7, {100, 2000, 30000, 30000}), {}, {}};
  stats::LatencyHistogram uncorrected;
  uncorrected.record(std::uint64_t{5});
  uncorrected.record(std::uint64_t{1} << 50);  // above the trackable range: the top bucket
  txn.uncorrected_latency = uncorrected;
  for (const std::uint64_t rtt : {30U, 45U}) {
    stats::TcpReading reading;
    reading.rtt_us = rtt;
    reading.ssthresh = 7;
    reading.busy_us = 1000 * rtt;
    txn.stats.tcp.add(reading);
  }
  txn.stats.counters.datagrams = datagrams();
  txn.flowops.push_back({"connect", stats_with(1, {123456})});
  txn.flowops.push_back({"write", stats_with(1000, {1, 255, 256, 1000000000})});
  txn.flowops.back().stats.counters.datagrams = datagrams();
  TxnResult empty_txn{"txn2", {}, {}, {}};
  empty_txn.flowops.push_back({"think", {}});
  r.groups.push_back({"group0", 4, {std::move(txn), std::move(empty_txn)}});
  r.groups[0].strand_counts = {{10, 640, 5}, {0, 0, 0}, {3, 1 << 20, 1}, {1, 2, 3}};
  r.groups.push_back({"g2", 0, {}});
  r.windows.push_back({1700000000123456789, std::chrono::nanoseconds(987654321), false});
  r.windows.push_back({1700000001000000000, std::chrono::nanoseconds(5), true, 9});
  r.connections_requested = 11;
  r.connections_established = 9;
  r.failed_strands = 2;
  r.error_samples.push_back({"group0/txn1/connect", "connect to 10.0.0.2: Connection refused"});
  r.error_samples.push_back({"group0/txn1/write", "write: Broken pipe", true});
  r.processes.push_back({"slave process 1 of 2", 4242, 3, 6, -4096, 1.25, 0.5});
  r.processes.push_back({"slave process 2 of 2", 4243, 1, 2, 1 << 20, 0, 0.125});
  return r;
}

void expect_stats_equal(const SlotStats& a, const SlotStats& b, const std::string& what) {
  EXPECT_EQ(a.counters, b.counters) << what;
  EXPECT_TRUE(a.latency == b.latency) << what;
  EXPECT_EQ(a.latency.count(), b.latency.count()) << what;
  EXPECT_EQ(a.latency.totals(), b.latency.totals()) << what;
  EXPECT_EQ(a.tcp, b.tcp) << what;
}

void expect_results_equal(const RunResult& got, const RunResult& want) {
  ASSERT_EQ(got.groups.size(), want.groups.size());
  for (std::size_t g = 0; g < want.groups.size(); ++g) {
    EXPECT_EQ(got.groups[g].name, want.groups[g].name);
    EXPECT_EQ(got.groups[g].strands, want.groups[g].strands);
    EXPECT_EQ(got.groups[g].strand_counts, want.groups[g].strand_counts);
    ASSERT_EQ(got.groups[g].transactions.size(), want.groups[g].transactions.size());
    for (std::size_t t = 0; t < want.groups[g].transactions.size(); ++t) {
      const auto& w = want.groups[g].transactions[t];
      const auto& x = got.groups[g].transactions[t];
      EXPECT_EQ(x.name, w.name);
      expect_stats_equal(x.stats, w.stats, w.name);
      ASSERT_EQ(x.uncorrected_latency.has_value(), w.uncorrected_latency.has_value()) << w.name;
      if (w.uncorrected_latency) {
        EXPECT_TRUE(*x.uncorrected_latency == *w.uncorrected_latency);
      }
      ASSERT_EQ(x.flowops.size(), w.flowops.size());
      for (std::size_t f = 0; f < w.flowops.size(); ++f) {
        EXPECT_EQ(x.flowops[f].type, w.flowops[f].type);
        expect_stats_equal(x.flowops[f].stats, w.flowops[f].stats, w.flowops[f].type);
      }
    }
  }
  ASSERT_EQ(got.windows.size(), want.windows.size());
  for (std::size_t w = 0; w < want.windows.size(); ++w) {
    EXPECT_EQ(got.windows[w].start_unix_ns, want.windows[w].start_unix_ns);
    EXPECT_EQ(got.windows[w].elapsed, want.windows[w].elapsed);
    EXPECT_EQ(got.windows[w].is_duration, want.windows[w].is_duration);
    EXPECT_EQ(got.windows[w].connections_read_exactly, want.windows[w].connections_read_exactly);
  }
  EXPECT_EQ(got.connections_requested, want.connections_requested);
  EXPECT_EQ(got.connections_established, want.connections_established);
  EXPECT_EQ(got.failed_strands, want.failed_strands);
  EXPECT_EQ(got.error_samples, want.error_samples);
  EXPECT_EQ(got.processes, want.processes);
}

std::optional<RunResult> read(const json& j, std::string& error) {
  return run_result_from_json(j, error);
}

TEST(ResultJson, RoundTripKeepsEveryField) {
  const RunResult r = sample_result();
  std::string error;
  const auto back = read(json::parse(to_json(r).dump()), error);
  ASSERT_TRUE(back.has_value()) << error;
  EXPECT_EQ(error, "");
  expect_results_equal(*back, r);
  EXPECT_EQ(back->groups[0].transactions[0].uncorrected_latency->max(), std::uint64_t{1} << 50);
  EXPECT_EQ(back->groups[0].transactions[0].stats.tcp.ssthresh.count(), 2U);
  EXPECT_EQ(back->groups[0].transactions[0].flowops[1].stats.counters.datagrams, datagrams());
  EXPECT_TRUE(back->error_samples[1].stopped);
  EXPECT_EQ(back->totals(), r.totals());
  EXPECT_EQ(back->transactions(), r.transactions());
}

TEST(ResultJson, EmptyResultRoundTrips) {
  std::string error;
  const auto back = read(to_json(RunResult{}), error);
  ASSERT_TRUE(back.has_value()) << error;
  expect_results_equal(*back, RunResult{});
}

TEST(ResultJson, ZeroCopyCountsGoOutAndComeBack) {
  RunResult r;
  TxnResult txn{"txn", {}, {}, {}};
  txn.flowops.push_back({"write", {}});
  txn.flowops.back().stats.counters.zerocopy = ZeroCopyCounters{10, 3, 6};
  txn.flowops.push_back({"read", {}});
  r.groups.push_back({"g", 1, {std::move(txn)}});
  r.windows.resize(1);
  const json j = to_json(r);
  const json& flowops = j["groups"][0]["transactions"][0]["flowops"];
  EXPECT_EQ(flowops[0]["zerocopy"],
            (json{{"sends", 10}, {"zero_copied", 3}, {"copied", 6}, {"unconfirmed", 1}}));
  EXPECT_FALSE(flowops[1].contains("zerocopy")) << "only where a zero-copy send was made";
  std::string error;
  const auto back = run_result_from_json(j, error);
  ASSERT_TRUE(back.has_value()) << error;
  EXPECT_EQ(back->groups[0].transactions[0].flowops[0].stats.counters.zerocopy,
            (ZeroCopyCounters{10, 3, 6}));
  EXPECT_FALSE(back->groups[0].transactions[0].flowops[1].stats.counters.zerocopy.any());
}

// The keys the result document shares (docs/results.md): a transaction's own counters under
// "counters", a flowop's in its object, histograms under latency_ns, errors by kind name.
TEST(ResultJson, TheFormTheDocumentShares) {
  const json j = to_json(sample_result());
  const json& txn = j["groups"][0]["transactions"][0];
  EXPECT_EQ(txn["counters"]["ops"], 7);
  EXPECT_EQ(txn["counters"]["errors"]["reset"], 3);
  EXPECT_EQ(txn["counters"]["errors"]["total"], 3 * (0 + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9));
  EXPECT_FALSE(txn["counters"]["errors"].contains("refused"));  // only the kinds that occurred
  EXPECT_EQ(txn["latency_ns"]["histogram"]["count"], 4);
  EXPECT_EQ(txn["latency_uncorrected_ns"]["histogram"]["count"], 2);
  EXPECT_EQ(txn["tcp"]["rtt_us"]["n"], 2);
  const json& write = txn["flowops"][1];
  EXPECT_EQ(write["type"], "write");
  EXPECT_EQ(write["ops"], 1000);
  EXPECT_EQ(write["bytes_written"], 20001);
  EXPECT_EQ(write["datagrams"]["gaps"], 12);
  EXPECT_EQ(write["datagrams"]["lost"], 10);  // gaps - late
  EXPECT_FALSE(txn["flowops"][0].contains("datagrams"));
  EXPECT_FALSE(txn["flowops"][0].contains("tcp"));
  EXPECT_FALSE(j["groups"][0]["transactions"][1].contains("latency_uncorrected_ns"));
  EXPECT_EQ(j["windows"][1], (json{{"start_unix_ns", 1700000001000000000},
                                   {"elapsed_ns", 5},
                                   {"is_duration", true},
                                   {"connections_read_exactly", 9}}));
  EXPECT_EQ(j["processes"][0]["rss_growth_bytes"], -4096);
  // Each strand's own counts only when they were kept (uperf's -T).
  EXPECT_EQ(j["groups"][0]["strand_counts"][2],
            (json{{"ops", 3}, {"bytes", 1 << 20}, {"transactions", 1}}));
  EXPECT_FALSE(j["groups"][1].contains("strand_counts"));
}

TEST(ResultJson, AWindowWithoutItsReadExactlyCountReadsAsZero) {
  // A document written before the drain counted its connections.
  json j = to_json(sample_result());
  j["windows"][1].erase("connections_read_exactly");
  std::string error;
  const auto back = run_result_from_json(j, error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->windows[1].connections_read_exactly, 0U);
}

TEST(ResultJson, KeysItDoesNotKnowAreIgnored) {
  json j = to_json(sample_result());
  j["totals"] = json{{"transactions", 1}};
  j["groups"][0]["transactions"][0]["transactions_per_s"] = 2.5;
  j["groups"][0]["transactions"][0]["latency_ns"]["p99"] = 30000;
  j["groups"][0]["transactions"][0]["tcp"]["rtt_us"]["median"] = 37.5;
  j["groups"][0]["transactions"][0]["flowops"][1]["host"] = "slave1";
  std::string error;
  const auto back = read(j, error);
  ASSERT_TRUE(back.has_value()) << error;
  expect_results_equal(*back, sample_result());
}

TEST(ResultJson, EachMissingFieldIsAnErrorNamingIt) {
  const json good = to_json(sample_result());
  for (const char* where : {"/groups",
                            "/windows",
                            "/connections_requested",
                            "/connections_established",
                            "/failed_strands",
                            "/error_samples",
                            "/processes",
                            "/groups/0/name",
                            "/groups/0/strands",
                            "/groups/0/transactions",
                            "/groups/0/transactions/0/name",
                            "/groups/0/transactions/0/counters",
                            "/groups/0/transactions/0/counters/ops",
                            "/groups/0/transactions/0/counters/errors",
                            "/groups/0/transactions/0/latency_ns",
                            "/groups/0/transactions/0/latency_ns/histogram",
                            "/groups/0/transactions/0/flowops",
                            "/groups/0/transactions/0/flowops/1/type",
                            "/groups/0/transactions/0/flowops/1/bytes_read",
                            "/groups/0/transactions/0/flowops/1/expired",
                            "/groups/0/transactions/0/flowops/1/latency_ns",
                            "/groups/0/transactions/0/flowops/1/datagrams/gaps",
                            "/groups/0/transactions/0/flowops/1/datagrams/jitter_ns",
                            "/windows/0/start_unix_ns",
                            "/windows/0/elapsed_ns",
                            "/windows/1/is_duration",
                            "/error_samples/1/where",
                            "/error_samples/1/message",
                            "/error_samples/1/stopped",
                            "/processes/0/name",
                            "/processes/1/pid",
                            "/processes/1/rss_growth_bytes",
                            "/processes/1/cpu_sys_s"}) {
    const json::json_pointer pointer(where);
    json j = good;
    j[pointer.parent_pointer()].erase(pointer.back());
    std::string error;
    EXPECT_FALSE(read(j, error).has_value()) << where;
    EXPECT_EQ(error, std::string("malformed results: ") + where + ": missing");
  }
}

TEST(ResultJson, WrongTypesAndUnknownErrorKindsAreErrors) {
  const json good = to_json(sample_result());
  const std::vector<std::pair<std::string, json>> cases = {
      {"/groups", json::object()},
      {"/groups/0", json::array()},
      {"/groups/0/name", 5},
      {"/groups/0/transactions/0/counters/errors", json::array({1, 2})},
      {"/groups/0/transactions/0/counters/errors/resets", 1},
      {"/groups/0/transactions/0/flowops/0/errors/reset", "3"},
      {"/groups/0/transactions/0/flowops/1/datagrams", 7},
      {"/groups/0/transactions/0/latency_ns/histogram", json{{"count", 1}}},
      {"/groups/0/transactions/0/latency_uncorrected_ns", json::object()},
      {"/groups/0/transactions/0/tcp", json{{"rtt_us", 5}}},
      {"/groups/0/transactions/0/tcp", json::object()},
      {"/windows/0/is_duration", 1},
      {"/error_samples/0/message", nullptr},
      {"/processes/0/cpu_user_s", "1.25"},
  };
  for (const auto& [where, value] : cases) {
    json j = good;
    j[json::json_pointer(where)] = value;
    std::string error;
    EXPECT_FALSE(read(j, error).has_value()) << where << " = " << value;
    EXPECT_EQ(error.rfind("malformed results: " + where, 0), 0U) << where << ": " << error;
  }
  std::string error;
  EXPECT_FALSE(read(json("garbage"), error).has_value());
  EXPECT_EQ(error, "malformed results: /: expected an object, got \"garbage\"");
}

TEST(ResultJson, NegativeOrFractionalCountsAreRefusedNotWrapped) {
  const json good = to_json(sample_result());
  const std::vector<std::pair<std::string, json>> cases = {
      {"/connections_requested", -1},
      {"/failed_strands", 1e300},
      {"/groups/0/strands", -2},
      {"/groups/0/transactions/0/counters/ops", 0.5},
      {"/groups/0/transactions/0/flowops/1/bytes_written", -20001},
      {"/groups/0/transactions/0/flowops/1/errors/reset", -3},
      {"/windows/0/elapsed_ns", 18446744073709551615ULL},
      {"/processes/0/pid", 1.5}};
  for (const auto& [where, value] : cases) {
    json j = good;
    j[json::json_pointer(where)] = value;
    std::string error;
    EXPECT_FALSE(read(j, error).has_value()) << where << " = " << value;
    EXPECT_NE(error.find(where), std::string::npos) << error;
  }
}

TEST(ResultJson, TheErrorsTotalIsAFigureNotAKind) {
  json j = to_json(sample_result());
  j["groups"][0]["transactions"][0]["counters"]["errors"]["total"] = 1;  // not read back
  std::string error;
  const auto back = read(j, error);
  ASSERT_TRUE(back.has_value()) << error;
  EXPECT_EQ(back->groups[0].transactions[0].stats.counters,
            sample_result().groups[0].transactions[0].stats.counters);
}

TEST(ResultJson, ErrorsAndDatagramsParts) {
  SlotCounters c;
  c.errors[static_cast<std::size_t>(ErrorKind::kAddrUnavailable)] = 2;
  c.errors[static_cast<std::size_t>(ErrorKind::kRefused)] = 1;
  EXPECT_EQ(errors_to_json(c), (json{{"addr_unavailable", 2}, {"refused", 1}, {"total", 3}}));
  EXPECT_EQ(errors_to_json(SlotCounters{}), (json{{"total", 0}}));
  EXPECT_EQ(datagrams_to_json(datagrams()), (json{{"sent", 1000},
                                                  {"received", 990},
                                                  {"lost", 10},
                                                  {"gaps", 12},
                                                  {"late", 2},
                                                  {"duplicates", 1},
                                                  {"timeouts", 3},
                                                  {"jitter_ns", 4567}}));
}

}  // namespace
}  // namespace volley::results
