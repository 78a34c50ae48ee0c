// An unpaced UDP stream, end to end (the real CLI, a real `--local` slave): its iterations run
// in place, back to back, on both sides (Strand::datagram_stream), and every one is still counted
// and timed as any other iteration: once per flowop and once per transaction, one latency sample
// each, every datagram with its header, the receiver's counts from those headers.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "support/local_run.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

using nlohmann::json;

std::string stream_profile(const std::string& bound, const std::string& size) {
  return R"XML(<?xml version="1.0"?>
<profile name="udp stream">
  <group nthreads="1">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=udp"/></transaction>
    <transaction )XML" +
         bound + R"XML(><flowop type="write" options="size=)XML" + size + R"XML("/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML";
}

std::uint64_t u64(const json& j, const char* key) { return j.at(key).get<std::uint64_t>(); }

/// The sender's side of the stream: every iteration one operation and one datagram, counted by
/// the flowop and by the transaction, each with its latency sample, the two the same samples
/// (one clock read per operation, the transaction being that one operation).
void expect_sender_counts(const json& txn, std::uint64_t iterations) {
  const json& op = txn.at("flowops").at(0);
  EXPECT_EQ(u64(txn, "transactions"), iterations);
  EXPECT_EQ(u64(op, "ops"), iterations);
  EXPECT_EQ(u64(op.at("datagrams"), "sent"), iterations);
  EXPECT_EQ(u64(op.at("latency_ns"), "count"), iterations);
  EXPECT_EQ(u64(txn.at("latency_ns"), "count"), iterations);
  EXPECT_EQ(op.at("latency_ns").at("histogram"), txn.at("latency_ns").at("histogram"));
  EXPECT_EQ(u64(op.at("errors"), "total"), 0U);
}

/// The receiver's side: one read per distinct datagram, its sequence numbers within those sent.
void expect_receiver_counts(const json& txn, std::uint64_t sent, std::uint64_t size) {
  const json& op = txn.at("flowops").at(0);
  const json& d = op.at("datagrams");
  const std::uint64_t received = u64(d, "received");
  EXPECT_GT(received, 0U);
  EXPECT_LE(received, sent);
  EXPECT_EQ(u64(d, "duplicates"), 0U);
  // Gaps never count a sequence number that was not sent.
  EXPECT_LE(received + u64(d, "lost") - u64(d, "late"), sent);
  EXPECT_EQ(u64(op, "ops"), received);
  EXPECT_EQ(u64(op, "bytes_read"), received * size);
  EXPECT_EQ(u64(op.at("latency_ns"), "count"), received);
  if (received > 1) {
    EXPECT_GT(u64(d, "jitter_ns"), 0U);
  }
}

TEST(UdpStream, EveryIterationCountedAndTimedOncePerFlowopAndTransaction) {
  TempDir dir;
  // Many times the worker's yield budget: the stream gives way and comes back many times.
  constexpr std::uint64_t kIterations = 20000;
  const auto run =
      run_local(dir, stream_profile("iterations=\"20000\"", "1472"), {"--set", "h=127.0.0.1"});
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err << run.process.out;
  ASSERT_FALSE(run.doc.is_discarded());
  const json& sender = run.doc.at("groups").at(0).at("transactions").at(1);
  expect_sender_counts(sender, kIterations);
  EXPECT_EQ(u64(sender.at("flowops").at(0), "bytes_written"), kIterations * 1472);
  expect_receiver_counts(run.doc.at("slaves").at(0).at("groups").at(0).at("transactions").at(1),
                         kIterations, 1472);
}

TEST(UdpStream, WithoutLatencyRecordingEveryIterationIsStillCounted) {
  TempDir dir;
  constexpr std::uint64_t kIterations = 5000;
  const auto run = run_local(dir, stream_profile("iterations=\"5000\"", "200"),
                             {"--set", "h=127.0.0.1", "--no-latency"});
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err << run.process.out;
  ASSERT_FALSE(run.doc.is_discarded());
  const json& sender = run.doc.at("groups").at(0).at("transactions").at(1);
  const json& op = sender.at("flowops").at(0);
  EXPECT_EQ(u64(sender, "transactions"), kIterations);
  EXPECT_EQ(u64(op, "ops"), kIterations);
  EXPECT_EQ(u64(op.at("datagrams"), "sent"), kIterations);
  EXPECT_EQ(u64(op.at("latency_ns"), "count"), 0U);
  EXPECT_EQ(u64(sender.at("latency_ns"), "count"), 0U);
  const json& got =
      run.doc.at("slaves").at(0).at("groups").at(0).at("transactions").at(1).at("flowops").at(0);
  EXPECT_GT(u64(got.at("datagrams"), "received"), 0U);
  EXPECT_EQ(u64(got, "ops"), u64(got.at("datagrams"), "received"));
}

TEST(UdpStream, ADurationStreamOfRandomSizesEndsAtItsDeadlineWithEqualCounts) {
  TempDir dir;
  // rand(): a size is drawn per datagram, on the slave too (its reads draw the same sizes).
  const auto run =
      run_local(dir, stream_profile("duration=\"1s\"", "rand(64,1472)"), {"--set", "h=127.0.0.1"});
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err << run.process.out;
  ASSERT_FALSE(run.doc.is_discarded());
  const json& sender = run.doc.at("groups").at(0).at("transactions").at(1);
  const std::uint64_t sent = u64(sender.at("flowops").at(0).at("datagrams"), "sent");
  EXPECT_GT(sent, 100U);
  expect_sender_counts(sender, sent);
  EXPECT_GE(sender.at("elapsed_s").get<double>(), 0.9);
  const json& receiver = run.doc.at("slaves").at(0).at("groups").at(0).at("transactions").at(1);
  const json& d = receiver.at("flowops").at(0).at("datagrams");
  EXPECT_GT(u64(d, "received"), 0U);
  EXPECT_LE(u64(d, "received"), sent);
  EXPECT_EQ(u64(d, "duplicates"), 0U);
}

}  // namespace
}  // namespace volley::test
