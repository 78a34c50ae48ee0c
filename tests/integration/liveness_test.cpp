// Profiles outside the ping-pong happy path, end to end through the real CLI: each must run and
// end on both sides (cooperative strands, cuts that reach every state), with random sizes drawn
// alike on every host and uperf's connection pool semantics. Every bound below is a hang guard.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/local_run.hpp"
#include "support/net.hpp"
#include "support/paths.hpp"
#include "support/process.hpp"
#include "support/slave_process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

/// Runs `xml` with --local (support/local_run.hpp) and returns its JSON document; the run must
/// end by itself and succeed.
json run_ok(const TempDir& dir, const std::string& xml, std::vector<std::string> extra = {},
            std::chrono::milliseconds limit = 60s) {
  const LocalRun run = run_local(dir, xml, std::move(extra), limit);
  EXPECT_FALSE(run.process.timed_out) << "the run hung:\n" << run.process.err;
  EXPECT_EQ(run.process.exit_code, 0) << run.process.err;
  return run.doc;
}

enum class Ops { kEqual, kNotCompared };

/// Every slave moved the bytes (and did the ops) the master did. A slave does not run the `nop`
/// or `think` of a duration step that has nothing else (nothing paces it), so such profiles
/// compare bytes only.
void expect_sides_agree(const json& doc, Ops ops = Ops::kEqual) {
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  ASSERT_GE(doc["comparison"].size(), 1U);
  for (const auto& c : doc["comparison"]) {
    EXPECT_EQ(c["master_bytes"], c["slave_bytes"]) << c.dump();
    if (ops == Ops::kEqual) {
      EXPECT_EQ(c["master_ops"], c["slave_ops"]) << c.dump();
    }
  }
}

/// The slave's step ended with the master's: a hang guard with seconds of slack, not a timing.
void expect_slave_step_ended_with_master(const json& doc, std::size_t txn) {
  ASSERT_FALSE(doc.is_discarded());
  const double master = doc["groups"][0]["transactions"][txn]["elapsed_s"].get<double>();
  for (const auto& slave : doc["slaves"]) {
    const double s = slave["groups"][0]["transactions"][txn]["elapsed_s"].get<double>();
    EXPECT_LT(s, master + 5.0) << "the slave's step outlived the master's by " << s - master
                               << " s";
  }
}

/// Runs `profile` against `slaves` ($a = 127.0.0.1, $b = 127.0.0.2) with EXTRA; the run must end by
/// itself and succeed. Its JSON document.
json run_two_hosts_ok(const TempDir& dir, const std::filesystem::path& profile,
                      const TwoLoopbackSlaves& slaves, const std::vector<std::string>& extra = {}) {
  const auto out = dir.path() / "r.json";
  std::vector<std::string> args{"run",    profile.string(), "-P",    slaves.port_text(),
                                "--set",  "a=127.0.0.1",    "--set", "b=127.0.0.2",
                                "--json", out.string(),     "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_volley(args, 60s);
  EXPECT_FALSE(r.timed_out) << "the run hung:\n" << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return read_json(out);
}

/// The slaves together moved the bytes the master did.
void expect_slaves_moved_the_masters_bytes(const json& doc) {
  ASSERT_FALSE(doc.is_discarded());
  std::uint64_t slave_bytes = 0;
  for (const auto& slave : doc["slaves"])
    slave_bytes += slave["totals"]["bytes"].get<std::uint64_t>();
  EXPECT_EQ(slave_bytes, doc["totals"]["bytes"].get<std::uint64_t>());
}

std::uint64_t iterations(const json& doc, std::size_t group, std::size_t txn) {
  return doc["groups"][group]["transactions"][txn]["transactions"].get<std::uint64_t>();
}

TEST(Liveness, NopDurationAfterConnectEndsOnBothSides) {
  TempDir dir;
  const json doc = run_ok(dir, R"XML(<?xml version="1.0"?>
<profile name="nop">
  <group nthreads="2">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp"/></transaction>
    <transaction duration="1s"><flowop type="nop"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML",
                          {"--slave-workers", "1"});
  expect_sides_agree(doc, Ops::kNotCompared);
  EXPECT_GT(iterations(doc, 0, 1), 0U);
  expect_slave_step_ended_with_master(doc, 1);
}

TEST(Liveness, SlaveMirrorOfShortThinkQuiesces) {
  TempDir dir;
  const json doc = run_ok(dir, R"XML(<?xml version="1.0"?>
<profile name="think">
  <group nthreads="16">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp"/></transaction>
    <transaction duration="1s"><flowop type="think" options="duration=1ms"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML");
  expect_sides_agree(doc, Ops::kNotCompared);
  EXPECT_GT(iterations(doc, 0, 1), 0U);
  expect_slave_step_ended_with_master(doc, 1);
}

TEST(Liveness, BusyStrandDoesNotStarveAnotherGroupOnOneWorker) {
  TempDir dir;
  const json doc =
      run_ok(dir, R"XML(<?xml version="1.0"?>
<profile name="starve">
  <group nthreads="1" name="spinner">
    <transaction iterations="1"><flowop type="nop"/></transaction>
    <transaction duration="1500ms"><flowop type="think" options="duration=100ms busy"/></transaction>
  </group>
  <group nthreads="1" name="nop">
    <transaction iterations="1"><flowop type="nop"/></transaction>
    <transaction duration="1500ms"><flowop type="nop"/></transaction>
  </group>
  <group nthreads="1" name="pingpong">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp"/></transaction>
    <transaction duration="1500ms">
      <flowop type="write" options="size=64"/><flowop type="read" options="size=64"/>
    </transaction>
  </group>
</profile>
)XML",
             {"--workers", "1", "--slave-workers", "1", "-i", "250ms",
              // The spinner's one think outlasts its step: it completes no iteration, by design.
              "--allow-empty"});
  expect_sides_agree(doc, Ops::kNotCompared);
  EXPECT_GT(iterations(doc, 0, 1), 0U);  // the spinner spins 100 ms at a time, and completes
  EXPECT_GT(iterations(doc, 1, 1), 0U);
  EXPECT_GT(iterations(doc, 2, 1), 0U);
  // The control thread kept sampling while a strand spun: the 1.5 s step is spread over several
  // intervals, not lumped into one.
  std::size_t with_pingpong = 0;
  for (const auto& interval : doc["intervals"]) {
    for (const auto& t : interval["transactions"]) {
      if (t["name"].get<std::string>().starts_with("pingpong/") &&
          t["transactions"].get<std::uint64_t>() > 0) {
        ++with_pingpong;
      }
    }
  }
  EXPECT_GE(with_pingpong, 3U);
}

TEST(Liveness, TimedOutLargeWriteCountsItsBytesOnBothSides) {
  // The slave does not pace (rate= is the master's): with its own timeout= it would run its
  // three reads back to back, stop reading, and count fewer bytes than the master sent. The three
  // writes, cut after 20 ms each, must together send less than one message (at 4 GB/s, 240 MB of
  // 1 GiB), or the slave's first read completes and the sides' operation counts differ (50 ms
  // writes of 512 MiB did: 597 MB in all on a fast run).
  TempDir dir;
  const json doc = run_ok(dir, R"XML(<?xml version="1.0"?>
<profile name="timeout">
  <group nthreads="1">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp wndsz=64k"/></transaction>
    <transaction iterations="3" rate="5"><flowop type="write" options="size=1g timeout=20ms canfail"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML");
  ASSERT_FALSE(doc.is_discarded());
  const auto& write = doc["groups"][0]["transactions"][1]["flowops"][0];
  EXPECT_EQ(write["errors"]["timed_out"].get<std::uint64_t>(), 3U) << write.dump();
  EXPECT_GT(write["bytes"].get<std::uint64_t>(), 0U);
  expect_sides_agree(doc);
}

TEST(Liveness, OneStrandTwoHostsRandomSizesAgree) {
  TempDir dir;
  TwoLoopbackSlaves slaves;
  const auto profile = dir.write("two.xml", R"XML(<?xml version="1.0"?>
<profile name="rand two hosts">
  <group nthreads="2">
    <transaction iterations="1">
      <flowop type="connect" options="remotehost=$a protocol=tcp conn=1"/>
      <flowop type="connect" options="remotehost=$b protocol=tcp conn=2"/>
    </transaction>
    <transaction duration="1s">
      <flowop type="write" options="size=rand(64,4096) conn=1"/>
      <flowop type="read" options="size=rand(64,4096) conn=1"/>
      <flowop type="write" options="size=rand(64,4096) conn=2"/>
      <flowop type="read" options="size=rand(64,4096) conn=2"/>
    </transaction>
    <transaction iterations="1">
      <flowop type="disconnect" options="conn=1"/>
      <flowop type="disconnect" options="conn=2"/>
    </transaction>
  </group>
</profile>
)XML");
  const json doc = run_two_hosts_ok(dir, profile, slaves);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_GT(iterations(doc, 0, 1), 10U);
  expect_slaves_moved_the_masters_bytes(doc);
}

TEST(Liveness, OneStrandTwoHostsDirPicksAgree) {
  // Files of different sizes: a slave that picked another file than the master would wait for
  // bytes that never come (or leave some unread).
  TempDir dir;
  for (int i = 1; i <= 5; ++i)
    dir.write(fmt::format("files/f{}", i), std::string(std::size_t(1000 * i + 7), 'x'));
  TwoLoopbackSlaves slaves;
  const auto profile = dir.write("dir.xml", R"XML(<?xml version="1.0"?>
<profile name="dir two hosts">
  <group nthreads="2">
    <transaction iterations="1">
      <flowop type="connect" options="remotehost=$a protocol=tcp conn=1"/>
      <flowop type="connect" options="remotehost=$b protocol=tcp conn=2"/>
    </transaction>
    <transaction duration="1s">
      <flowop type="sendfile" options="dir=$d conn=1"/>
      <flowop type="read" options="size=8 conn=1"/>
      <flowop type="sendfile" options="dir=$d conn=2"/>
      <flowop type="read" options="size=8 conn=2"/>
    </transaction>
    <transaction iterations="1">
      <flowop type="disconnect" options="conn=1"/>
      <flowop type="disconnect" options="conn=2"/>
    </transaction>
  </group>
</profile>
)XML");
  const json doc =
      run_two_hosts_ok(dir, profile, slaves, {"--set", "d=" + (dir.path() / "files").string()});
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_GT(iterations(doc, 0, 1), 10U);
  expect_slaves_moved_the_masters_bytes(doc);
}

/// uperf's own profiles (tests/data/profiles/uperf/) run with equal counts on both sides.
class UperfProfile : public ::testing::TestWithParam<std::string> {};

TEST_P(UperfProfile, RunsWithEqualCounts) {
  TempDir dir;
  const std::string xml = read_file(data_dir() / "profiles" / "uperf" / GetParam());
  const json doc = run_ok(dir, xml, {"--set", "h=127.0.0.1"});
  expect_sides_agree(doc);
  EXPECT_EQ(doc["totals"]["errors"]["total"].get<std::uint64_t>(), 0U);
  EXPECT_EQ(doc["totals"]["connections_requested"], doc["totals"]["connections_established"]);
  EXPECT_GT(doc["totals"]["connections_established"].get<std::uint64_t>(), 0U);
}

INSTANTIATE_TEST_SUITE_P(Uperf, UperfProfile,
                         ::testing::Values("disconnect_iter.xml", "accept-tcp.xml", "canfail.xml"),
                         [](const auto& param_info) {
                           std::string name =
                               param_info.param.substr(0, param_info.param.find('.'));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace volley::test
