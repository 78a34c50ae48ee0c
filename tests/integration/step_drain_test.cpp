// The end of a step, end to end through the real CLI: after each step both sides have read
// exactly what the other wrote on every connection (the end-of-step drain), so the byte totals
// agree per transaction and the next step starts with its streams in step. Bounds are hang guards.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/local_run.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::uint64_t sum_flowops(const json& txn, const char* key) {
  std::uint64_t n = 0;
  for (const auto& f : txn.at("flowops")) n += f.at(key).get<std::uint64_t>();
  return n;
}

/// Per transaction, what the master wrote every slave read and what the slaves wrote the master
/// read: exactly, cut or not.
void expect_bytes_equal_per_transaction(const json& doc) {
  ASSERT_FALSE(doc.is_discarded());
  const auto& groups = doc.at("groups");
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& txns = groups[g].at("transactions");
    for (std::size_t t = 0; t < txns.size(); ++t) {
      std::uint64_t slaves_read = 0;
      std::uint64_t slaves_written = 0;
      for (const auto& s : doc.at("slaves")) {
        const auto& st = s.at("groups").at(g).at("transactions").at(t);
        slaves_read += sum_flowops(st, "bytes_read");
        slaves_written += sum_flowops(st, "bytes_written");
      }
      EXPECT_EQ(sum_flowops(txns[t], "bytes_read"), slaves_written)
          << "group " << g << " transaction " << t << ": the master read less than the slave wrote";
      EXPECT_EQ(sum_flowops(txns[t], "bytes_written"), slaves_read)
          << "group " << g << " transaction " << t;
    }
  }
}

// The slave's mirror of a master that only reads keeps writing into the socket buffers until it
// is cut; the master stopped reading at its deadline. The drain must read those bytes, or the
// run would say "ok" with megabytes unaccounted for.
TEST(StepDrain, MasterThatOnlyReadsInADurationStepReadsEverythingTheSlaveWrote) {
  TempDir dir;
  const LocalRun run = run_local(dir, R"XML(<?xml version="1.0"?>
<profile name="master reads">
  <group nthreads="4">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp"/></transaction>
    <transaction duration="1s"><flowop type="read" options="size=64k"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML");
  ASSERT_FALSE(run.process.timed_out) << run.process.err;
  EXPECT_EQ(run.process.exit_code, 0) << run.process.out << run.process.err;
  EXPECT_EQ(run.doc["status"], "ok") << run.doc["failure"];
  expect_bytes_equal_per_transaction(run.doc);
}

// The other direction: the slave's reads are cut after the master stopped writing.
TEST(StepDrain, SlaveThatOnlyReadsInADurationStepReadsEverythingTheMasterWrote) {
  TempDir dir;
  const LocalRun run = run_local(dir, R"XML(<?xml version="1.0"?>
<profile name="master writes">
  <group nthreads="4">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp"/></transaction>
    <transaction duration="1s"><flowop type="write" options="size=rand(1000,200000)"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML");
  ASSERT_FALSE(run.process.timed_out) << run.process.err;
  EXPECT_EQ(run.process.exit_code, 0) << run.process.out << run.process.err;
  expect_bytes_equal_per_transaction(run.doc);
}

// Generated seed 35: an iterations step after a duration step on the same connection, with
// random sizes. The duration step's cut left the slave's bytes unread and the two sides' random
// draws at different places, so the master's recv waited for bytes the slave never sent.
TEST(StepDrain, IterationsStepAfterADurationStepStartsInStep) {
  TempDir dir;
  const LocalRun run = run_local(dir, R"XML(<?xml version="1.0"?>
<profile name="duration then iterations">
  <group nthreads="3">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp"/></transaction>
    <transaction duration="300ms">
      <flowop type="recv" options="size=rand(1000,65536)"/>
      <flowop type="send" options="size=rand(1,4096)"/>
    </transaction>
    <transaction iterations="5"><flowop type="recv" options="size=rand(1000,65536) count=2"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML");
  ASSERT_FALSE(run.process.timed_out) << "the run hung:\n" << run.process.err;
  EXPECT_EQ(run.process.exit_code, 0) << run.process.out << run.process.err;
  EXPECT_EQ(run.doc["status"], "ok") << run.doc["failure"];
  expect_bytes_equal_per_transaction(run.doc);
}

/// A run that must succeed, with equal bytes per transaction and, in its steps bound by
/// iterations, the same operations on both sides (the result checks fail the run otherwise).
void expect_ok(const LocalRun& run) {
  ASSERT_FALSE(run.process.timed_out) << run.process.err;
  EXPECT_EQ(run.process.exit_code, 0) << run.process.out << run.process.err;
  EXPECT_EQ(run.doc.value("status", ""), "ok") << run.doc.value("failure", "");
  expect_bytes_equal_per_transaction(run.doc);
}

// The master's second small write waits for the first one's ACK (Nagle, and the peer's delayed
// ACK: about 40 ms). The slave's read of it must wait for it, not end with the step: in a step
// bound by iterations both sides must complete the same operations. (A quiet spell of 30 ms
// once cut it, and the run failed with "operations disagree".)
TEST(StepEnd, BytesHeldBackByNagleStillCompleteTheSlavesLastRead) {
  TempDir dir;
  const LocalRun run = run_local(dir, R"XML(<?xml version="1.0"?>
<profile name="nagle">
  <group nthreads="2">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp"/></transaction>
    <transaction iterations="6">
      <flowop type="read" options="size=2048"/>
      <flowop type="write" options="size=64"/>
      <flowop type="write" options="size=64"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML");
  expect_ok(run);
}

// A slave's mirror that connects to the master, writes and disconnects never waits for the
// master (its listener's queue takes the connects): it must stop with the master's end of the
// step, not run on until a quiet spell that never comes. The bytes it wrote on connections the
// master's strands never accepted (their accepts were cut at the deadline) are read by the
// master's drain, so both sides count the same bytes.
TEST(StepEnd, ASlaveThatConnectsToTheMasterStopsWithTheStepAndItsBytesAreRead) {
  TempDir dir;
  const auto start = std::chrono::steady_clock::now();
  const LocalRun run = run_local(dir, R"XML(<?xml version="1.0"?>
<profile name="slave connects">
  <group nthreads="4">
    <transaction duration="300ms">
      <flowop type="accept" options="remotehost=$h protocol=tcp conn=3"/>
      <flowop type="read" options="size=rand(16,4096) conn=3"/>
      <flowop type="disconnect" options="conn=3"/>
    </transaction>
  </group>
</profile>
)XML");
  expect_ok(run);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s) << "the step did not end promptly";
}

// The master reads only part of what the slave's mirror writes on a connection before its
// deadline; the slave writes the rest and closes the connection. What it wrote on connections
// it closed is known to the master only as a sum per connection id, and the drain reads it.
TEST(StepEnd, BytesOnConnectionsThePeerClosedAreDrained) {
  TempDir dir;
  const LocalRun run = run_local(dir, R"XML(<?xml version="1.0"?>
<profile name="peer closes">
  <group nthreads="3">
    <transaction duration="300ms">
      <flowop type="accept" options="remotehost=$h protocol=tcp tcp_nodelay"/>
      <flowop type="read" options="size=rand(1,65536)"/>
      <flowop type="recv" options="size=204800"/>
      <flowop type="read" options="size=1"/>
      <flowop type="disconnect"/>
      <flowop type="think" options="duration=1ms"/>
    </transaction>
  </group>
</profile>
)XML");
  expect_ok(run);
}

// The other direction: the master connects, writes and closes; the slave's reads on the
// connections the master closed go on while their bytes are still to come.
TEST(StepEnd, TheSlaveReadsWhatTheMasterWroteOnConnectionsItClosed) {
  TempDir dir;
  const LocalRun run = run_local(dir, R"XML(<?xml version="1.0"?>
<profile name="master closes">
  <group nthreads="3">
    <transaction duration="300ms">
      <flowop type="connect" options="remotehost=$h protocol=tcp"/>
      <flowop type="write" options="size=rand(1000,300000)"/>
      <flowop type="disconnect"/>
    </transaction>
    <transaction iterations="20">
      <flowop type="connect" options="remotehost=$h protocol=tcp"/>
      <flowop type="write" options="size=rand(1000,300000)"/>
      <flowop type="disconnect"/>
    </transaction>
  </group>
</profile>
)XML");
  expect_ok(run);
}

}  // namespace
}  // namespace volley::test
