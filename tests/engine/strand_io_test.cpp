// The strand's I/O loop over in-memory connections that fail on cue (tests/support/
// faulty_connection.hpp): would-block, partial transfers, resets, end of file, cancellation and
// timeout=, without sockets, so each case is exact and quick.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>
#include <vector>

#include <boost/asio/error.hpp>

#include "support/faulty_connection.hpp"
#include "volley/engine/engine.hpp"
#include "volley/engine/error_kind.hpp"

namespace volley::engine {
namespace {

using namespace std::chrono_literals;
using test::FaultyConnections;

std::size_t kind(results::ErrorKind k) { return static_cast<std::size_t>(k); }

profile::Flowop strand_flowop(std::string type, profile::FlowopSpec spec, bool canfail = false,
                              std::optional<profile::Nanoseconds> timeout = {}) {
  profile::Flowop f;
  f.type = std::move(type);
  f.spec = std::move(spec);
  f.common.canfail = canfail;
  f.common.timeout = timeout;
  return f;
}

profile::Flowop strand_write_op(std::uint64_t bytes, bool canfail = false) {
  profile::WriteOp w;
  w.size = profile::SizeSpec::fixed(bytes);
  return strand_flowop("write", w, canfail);
}

profile::Flowop strand_read_op(std::uint64_t bytes, bool canfail = false,
                               std::optional<profile::Nanoseconds> timeout = {}) {
  profile::ReadOp r;
  r.size = profile::SizeSpec::fixed(bytes);
  return strand_flowop("read", r, canfail, timeout);
}

/// One strand: connect once, then `iterations` of `flowops`.
Plan connect_then(std::vector<profile::Flowop> flowops, std::uint64_t iterations) {
  profile::ConnectOp connect;
  connect.connection.remotehost = "x";
  profile::Transaction open;
  open.bound = profile::Iterations{1};
  open.flowops = {strand_flowop("connect", connect)};
  profile::Transaction work;
  work.bound = profile::Iterations{iterations};
  work.flowops = std::move(flowops);
  profile::Group group;
  group.name = "g";
  group.nthreads = 1;
  group.transactions = {open, work};
  profile::Profile p;
  p.groups = {group};
  core::Diagnostics diags;
  auto plan = compile(p, {}, diags);
  EXPECT_TRUE(plan.has_value()) << diags.format(nullptr);
  return plan ? std::move(*plan) : Plan{};
}

/// Runs every transaction; a transaction not done within 20 s fails the test (a hang guard).
results::RunResult run(const Plan& plan, const FaultyConnections& faults) {
  EngineConfig config;
  config.workers = 1;
  faults.install(config);
  std::vector<std::promise<void>> done(plan.txn_count);
  config.on_txn_done = [&done](std::size_t txn) { done.at(txn).set_value(); };
  Engine engine(plan, std::move(config));
  engine.start();
  for (std::size_t t = 0; t < plan.txn_count; ++t) {
    engine.release(t);
    if (done[t].get_future().wait_for(20s) != std::future_status::ready) {
      ADD_FAILURE() << "transaction " << t << " did not finish";
      engine.stop();
      break;
    }
  }
  return engine.finish();
}

const results::SlotCounters& counters(const results::RunResult& r, std::size_t flowop) {
  return r.groups.at(0).transactions.at(1).flowops.at(flowop).stats.counters;
}

TEST(StrandIo, PartialTransfersAndWouldBlockStillMoveEveryByte) {
  FaultyConnections faults;
  faults.script.max_per_call = 7;
  faults.script.would_block_every = 3;
  const Plan plan = connect_then({strand_write_op(1000), strand_read_op(1000)}, 50);
  const results::RunResult r = run(plan, faults);

  EXPECT_EQ(counters(r, 0).bytes_written, 50'000U);
  EXPECT_EQ(counters(r, 1).bytes_read, 50'000U);
  EXPECT_EQ(counters(r, 0).ops, 50U);
  EXPECT_EQ(counters(r, 1).ops, 50U);
  EXPECT_EQ(counters(r, 0).error_total() + counters(r, 1).error_total(), 0U);
  EXPECT_EQ(faults.tally->bytes_written, 50'000U);
  EXPECT_EQ(faults.tally->bytes_read, 50'000U);
  EXPECT_GT(faults.tally->would_blocks, 0U);
  EXPECT_EQ(faults.tally->waits, faults.tally->would_blocks);  // each would-block waits once
  EXPECT_EQ(r.failed_strands, 0U);
}

TEST(StrandIo, ResetOnTheNthCallStopsTheStrandWithReset) {
  // Calls alternate write, read: the 10th is the 5th read.
  const auto faults = FaultyConnections::failing_on(10, boost::asio::error::connection_reset);
  const Plan plan = connect_then({strand_write_op(64), strand_read_op(64)}, 100);
  const results::RunResult r = run(plan, faults);

  EXPECT_EQ(counters(r, 0).ops, 5U);
  EXPECT_EQ(counters(r, 1).ops, 4U);
  EXPECT_EQ(counters(r, 1).errors[kind(results::ErrorKind::kReset)], 1U);
  EXPECT_EQ(counters(r, 1).error_total(), 1U);
  EXPECT_EQ(r.failed_strands, 1U);
}

TEST(StrandIo, ResetWithCanfailIsCountedAndTheStrandGoesOn) {
  const auto faults = FaultyConnections::failing_on(10, boost::asio::error::connection_reset);
  const Plan plan = connect_then({strand_write_op(64), strand_read_op(64, /*canfail=*/true)}, 100);
  const results::RunResult r = run(plan, faults);

  EXPECT_EQ(counters(r, 0).ops, 100U);
  EXPECT_EQ(counters(r, 1).ops, 99U);
  EXPECT_EQ(counters(r, 1).errors[kind(results::ErrorKind::kReset)], 1U);
  EXPECT_EQ(r.failed_strands, 0U);
}

TEST(StrandIo, EndOfFileInsideAReadIsPeerClosed) {
  FaultyConnections faults;
  faults.script.readable_bytes = 100;
  const Plan plan = connect_then({strand_read_op(64)}, 5);
  const results::RunResult r = run(plan, faults);

  EXPECT_EQ(counters(r, 0).ops, 1U);
  EXPECT_EQ(counters(r, 0).bytes_read, 100U);  // the 36 bytes that did come are counted
  EXPECT_EQ(counters(r, 0).errors[kind(results::ErrorKind::kPeerClosed)], 1U);
  EXPECT_EQ(r.failed_strands, 1U);
}

TEST(StrandIo, ReadingAheadKeepsTheRestForTheNextReads) {
  // As on TCP: a read asks for a whole buffer, so one call takes what the peer sent for several
  // flowops; each flowop still counts exactly its own bytes, and the last read sees end of file.
  FaultyConnections faults;
  faults.script.reads_ahead = true;
  faults.script.readable_bytes = 300;
  const Plan plan = connect_then({strand_read_op(100)}, 4);
  const results::RunResult r = run(plan, faults);

  EXPECT_EQ(counters(r, 0).ops, 3U);
  EXPECT_EQ(counters(r, 0).bytes_read, 300U);
  EXPECT_EQ(faults.tally->bytes_read, 300U);
  EXPECT_EQ(faults.tally->calls, 2U);  // one read for three flowops, one that sees end of file
  EXPECT_EQ(counters(r, 0).errors[kind(results::ErrorKind::kPeerClosed)], 1U);
}

TEST(StrandIo, ALargeMessagesReadAsksForTheWholeBufferSmallOnesFor16KiB) {
  // A read of 16 KiB or more asks for all of the worker's buffer (256 KiB, or the largest
  // message), so one call takes what the peer has sent, up to that, as a blocking reader's read of
  // its whole buffer does; a smaller message's read asks for 16 KiB.
  auto read_calls = [](std::uint64_t message, std::uint64_t iterations) {
    FaultyConnections faults;
    faults.script.reads_ahead = true;
    faults.script.readable_bytes = message * iterations;
    const Plan plan = connect_then({strand_read_op(message)}, iterations + 1);
    const results::RunResult r = run(plan, faults);
    EXPECT_EQ(counters(r, 0).ops, iterations);
    EXPECT_EQ(counters(r, 0).bytes_read, message * iterations);
    return faults.tally->calls.load();
  };
  EXPECT_EQ(read_calls(64 * 1024, 8), 2U + 1U);     // 512 KiB in two 256 KiB reads, then EOF
  EXPECT_EQ(read_calls(1024 * 1024, 2), 2U + 1U);   // the buffer holds a 1 MiB message
  EXPECT_EQ(read_calls(1024, 64), 64U / 16U + 1U);  // 64 KiB in four 16 KiB reads
}

TEST(StrandIo, TimeoutEndsAWaitThatNeverCompletes) {
  const auto faults = FaultyConnections::never_ready();
  const Plan plan = connect_then({strand_read_op(64, /*canfail=*/true, 20ms)}, 3);
  const results::RunResult r = run(plan, faults);

  EXPECT_EQ(counters(r, 0).ops, 0U);
  EXPECT_EQ(counters(r, 0).errors[kind(results::ErrorKind::kTimedOut)], 3U);
  EXPECT_EQ(faults.tally->cancels, 3U);  // each timeout cancelled the wait in progress
  EXPECT_EQ(r.failed_strands, 0U);
}

TEST(StrandIo, StopCancelsAWaitThatNeverCompletes) {
  const auto faults = FaultyConnections::never_ready();
  const Plan plan = connect_then({strand_read_op(64)}, 1);
  EngineConfig config;
  config.workers = 1;
  faults.install(config);
  std::promise<void> connected;
  config.on_txn_done = [&connected](std::size_t txn) {
    if (txn == 0) connected.set_value();
  };
  Engine engine(plan, std::move(config));
  engine.start();
  engine.release(0);
  ASSERT_EQ(connected.get_future().wait_for(20s), std::future_status::ready);
  engine.release(1);
  while (faults.tally->waits == 0) std::this_thread::sleep_for(1ms);  // the read now waits
  auto stopped = std::async(std::launch::async, [&engine] {
    engine.stop();
    return engine.finish();
  });
  if (stopped.wait_for(20s) != std::future_status::ready) {
    std::fprintf(stderr, "Engine::stop() + finish() hung on a waiting read\n");
    std::_Exit(1);
  }
  const results::RunResult r = stopped.get();
  EXPECT_GE(faults.tally->cancels, 1U);
  EXPECT_EQ(counters(r, 0).ops, 0U);
  EXPECT_EQ(r.failed_strands, 0U);
  EXPECT_TRUE(faults.tally->closed);  // finish() closes what the profile left open
}

}  // namespace
}  // namespace volley::engine
