// The hosts' kernel counters over the timed part, through the real CLI (`volley run --local`):
// present for the master and the slave, every watched counter either counted or named absent;
// and one provoked for real: an unpaced UDP stream into a receive buffer of a few datagrams
// (wndsz) overflows it, which the kernel counts as Udp.RcvbufErrors. With --local both sides
// share the host's counters, so both see it move.
#include <gtest/gtest.h>

#include <algorithm>

#include <string>

#include <nlohmann/json.hpp>

#include "support/local_run.hpp"
#include "support/temp_dir.hpp"
#include "volley/sampling/kernel_counters.hpp"

namespace volley::test {
namespace {

using nlohmann::json;

/// Every watched counter is in `counters` or in `absent`, never both; softnet was read.
void expect_complete(const json& side, const std::string& host) {
  ASSERT_TRUE(side.is_object()) << host << ": " << side;
  EXPECT_EQ(side.at("host"), host);
  EXPECT_GT(side.at("wall_s").get<double>(), 0.0);
  for (const auto name : sampling::watched_protocol_counters()) {
    const std::string key(name);
    const bool counted = side.at("counters").contains(key);
    const bool absent = std::find(side.at("absent").begin(), side.at("absent").end(), key) !=
                        side.at("absent").end();
    EXPECT_NE(counted, absent) << host << ": " << key;
  }
  EXPECT_TRUE(side.at("counters").contains("Tcp.RetransSegs")) << side;
  ASSERT_TRUE(side.at("softnet").is_object()) << side;
  EXPECT_FALSE(side.at("softnet").at("per_cpu").empty());
  EXPECT_TRUE(side.at("problems").empty()) << side.at("problems");
}

TEST(KernelCounters, PresentForMasterAndSlave) {
  TempDir dir;
  const auto run = run_local(dir, R"XML(<?xml version="1.0"?>
<profile name="kernel counters">
  <group nthreads="1">
    <transaction iterations="1"><flowop type="connect" options="remotehost=127.0.0.1 protocol=tcp"/></transaction>
    <transaction duration="500ms">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err << run.process.out;
  const json& kernel = run.doc.at("kernel");
  expect_complete(kernel.at("local"), "master");
  ASSERT_EQ(kernel.at("remote").size(), 1U);
  expect_complete(kernel.at("remote").at(0), "127.0.0.1");
  // A clean loopback ping-pong: no rule but the full CPU fires (docs/results.md, Bottleneck).
  for (const auto& b : run.doc.at("bottlenecks")) EXPECT_EQ(b.at("rule"), "cpu_full") << b;
}

TEST(KernelCounters, OverflowedUdpReceiveBufferIsCounted) {
  TempDir dir;
  // wndsz applies to both ends: the slave's receive buffer holds a handful of datagrams, and
  // nothing paces the sender.
  const auto run = run_local(dir, R"XML(<?xml version="1.0"?>
<profile name="udp overflow">
  <group nthreads="1">
    <transaction iterations="1"><flowop type="connect" options="remotehost=127.0.0.1 protocol=udp wndsz=4k"/></transaction>
    <transaction duration="1s"><flowop type="write" options="size=1472"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err << run.process.out;
  const json& slave = run.doc.at("kernel").at("remote").at(0);
  ASSERT_TRUE(slave.is_object()) << run.doc.at("kernel");
  ASSERT_TRUE(slave.at("counters").contains("Udp.RcvbufErrors")) << slave;
  EXPECT_GT(slave.at("counters").at("Udp.RcvbufErrors").get<std::uint64_t>(), 0U) << slave;
  EXPECT_GT(
      run.doc.at("kernel").at("local").at("counters").at("Udp.RcvbufErrors").get<std::uint64_t>(),
      0U);
  // The receiver lost what its buffer could not take.
  const json& received = run.doc.at("slaves")
                             .at(0)
                             .at("groups")
                             .at(0)
                             .at("transactions")
                             .at(1)
                             .at("flowops")
                             .at(0)
                             .at("datagrams");
  EXPECT_GT(received.at("lost").get<std::uint64_t>(), 0U) << received;
}

}  // namespace
}  // namespace volley::test
