// A UDP stream sent in batches (sendmmsg) or as super-buffers (gso: UDP_SEGMENT out, UDP_GRO
// in), end to end through the CLI with a `--local` slave: both sides count the same datagrams.
// The master counts every datagram it sent once, as one operation with one latency sample; the
// slave counts every datagram that arrived once, cut back out of its super-buffer with gso, with
// its bytes; what it did not get it counts lost where a later one showed the gap. When the
// kernel dropped nothing during the run (its Udp counters), the slave got every datagram.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "support/local_run.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

using nlohmann::json;

std::string batched_profile(const std::string& bound, const std::string& connect_options) {
  return R"XML(<?xml version="1.0"?>
<profile name="udp batched">
  <group nthreads="1">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=udp )XML" +
         connect_options + R"XML("/></transaction>
    <transaction )XML" +
         bound + R"XML(><flowop type="write" options="size=1472"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML";
}

std::uint64_t count_of(const json& j, const char* key) { return j.at(key).get<std::uint64_t>(); }

/// Datagrams the kernel dropped on receipt during the run (both ends are this host), or nullopt
/// when the run did not read the counters.
std::optional<std::uint64_t> kernel_drops(const json& doc) {
  if (!doc.contains("kernel") || !doc.at("kernel").contains("local")) return std::nullopt;
  const json& counters = doc.at("kernel").at("local").at("counters");
  if (!counters.contains("Udp.InErrors") || !counters.contains("Udp.RcvbufErrors")) {
    return std::nullopt;
  }
  return count_of(counters, "Udp.InErrors") + count_of(counters, "Udp.RcvbufErrors");
}

/// The master's stream step: `sent` datagrams, each one operation, one iteration, one sample.
void expect_sent_once(const json& txn, std::uint64_t sent) {
  const json& op = txn.at("flowops").at(0);
  EXPECT_EQ(count_of(txn, "transactions"), sent);
  EXPECT_EQ(count_of(op, "ops"), sent);
  EXPECT_EQ(count_of(op.at("datagrams"), "sent"), sent);
  EXPECT_EQ(count_of(op, "bytes_written"), sent * 1472);
  EXPECT_EQ(count_of(op.at("latency_ns"), "count"), sent);
  EXPECT_EQ(count_of(txn.at("latency_ns"), "count"), sent);
  EXPECT_EQ(count_of(op.at("errors"), "total"), 0U);
}

/// The slave's side of the same step: what arrived, each datagram once.
void expect_received_once(const json& txn, std::uint64_t sent) {
  const json& op = txn.at("flowops").at(0);
  const json& d = op.at("datagrams");
  const std::uint64_t received = count_of(d, "received");
  EXPECT_GT(received, 0U);
  EXPECT_LE(received, sent);
  EXPECT_EQ(count_of(d, "duplicates"), 0U);
  EXPECT_LE(received + count_of(d, "lost") - count_of(d, "late"), sent);
  EXPECT_EQ(count_of(op, "ops"), received);
  EXPECT_EQ(count_of(txn, "transactions"), received);
  EXPECT_EQ(count_of(op, "bytes_read"), received * 1472);
  EXPECT_EQ(count_of(op.at("latency_ns"), "count"), received);
}

/// Runs `xml` and checks both sides of its stream step; returns what the slave received.
std::uint64_t run_and_check(const std::string& xml, std::uint64_t iterations) {
  TempDir dir;
  const auto run = run_local(dir, xml, {"--set", "h=127.0.0.1"});
  EXPECT_EQ(run.process.exit_code, 0) << run.process.err << run.process.out;
  if (run.doc.is_discarded()) {
    ADD_FAILURE() << "no JSON document";
    return 0;
  }
  const json& sender = run.doc.at("groups").at(0).at("transactions").at(1);
  const std::uint64_t sent = count_of(sender.at("flowops").at(0).at("datagrams"), "sent");
  if (iterations != 0) {
    EXPECT_EQ(sent, iterations);
  }
  expect_sent_once(sender, sent);
  const json& receiver = run.doc.at("slaves").at(0).at("groups").at(0).at("transactions").at(1);
  expect_received_once(receiver, sent);
  const std::uint64_t received = count_of(receiver.at("flowops").at(0).at("datagrams"), "received");
  if (const auto drops = kernel_drops(run.doc); drops && *drops == 0) {
    EXPECT_EQ(received, sent) << "the kernel dropped nothing, yet datagrams are missing";
    EXPECT_EQ(count_of(receiver.at("flowops").at(0).at("datagrams"), "lost"), 0U);
  }
  return received;
}

TEST(UdpBatchedStream, BothSidesCountEveryDatagramOnce) {
  run_and_check(batched_profile("iterations=\"20000\"", "wndsz=4m"), 20000);
}

TEST(UdpBatchedStream, WithGsoBothSidesCountEveryDatagramOnce) {
  // 2000 datagrams, 2.9 MB: a 4 MiB receive buffer holds them even if the slave falls behind.
  run_and_check(batched_profile("iterations=\"2000\"", "wndsz=4m gso"), 2000);
}

TEST(UdpBatchedStream, ADurationStreamWithGsoCountsAlikeOnBothSides) {
  run_and_check(batched_profile("duration=\"1s\"", "gso"), 0);
}

}  // namespace
}  // namespace volley::test
