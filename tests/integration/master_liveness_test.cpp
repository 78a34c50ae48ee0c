// The master's side of an honest run, end to end through the real CLI against real slaves: a
// dead link is noticed within seconds and the report keeps what was measured; a run that did
// not do its work is not "ok"; the master's data listener serves slaves on several networks.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/local_run.hpp"
#include "support/net.hpp"
#include "support/process.hpp"
#include "support/serve.hpp"
#include "support/slave_process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

/// `volley serve -q` on ADDRESS:port, waited for until it accepts, stopped by PID.
class LivenessServe : public SlaveProcess {
 public:
  LivenessServe(const std::string& address, std::uint16_t port)
      : SlaveProcess(serve_command(listen_address(address, port), {"-q", "--workers", "1"}),
                     address, port) {}
};

TEST(MasterLiveness, StoppedSlaveIsLostWithinSecondsAndRatesCoverTheMeasuredTime) {
  TempDir dir;
  const std::uint16_t port = free_port();
  LivenessServe slave("127.0.0.1", port);
  const auto profile = dir.write("pp.xml", pingpong("4", "30s", "", "$h"));
  const auto out = dir.path() / "r.json";
  Process master({VOLLEY_BINARY, "run", profile, "-P", std::to_string(port), "--set", "h=127.0.0.1",
                  "--json", out, "-q"});
  std::this_thread::sleep_for(2s);
  // The link goes dead: the slave neither answers nor closes anything.
  slave.signal(SIGSTOP);
  const auto stopped_at = std::chrono::steady_clock::now();
  const auto r = master.wait(30s);
  const auto noticed = std::chrono::steady_clock::now() - stopped_at;
  slave.stop(5s);
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // 2.5 s of silence plus a 250 ms tick, then stopping and writing the report: the old master
  // took 10 s. The bound is a hang guard with room for a loaded machine.
  EXPECT_LT(noticed, 7s);
  EXPECT_NE(r.err.find("slave 127.0.0.1 has been silent"), std::string::npos) << r.err;
  const json doc = read_json(out);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "failed");
  EXPECT_FALSE(doc["slaves"][0]["missing"].is_null());
  EXPECT_TRUE(doc["slaves"][0]["totals"].is_null());
  EXPECT_TRUE(doc["comparison"][0]["bytes_difference_pct"].is_null());
  // The timed step ran ~2 s before the link died; its window ends at the last progress, not
  // when the silence was noticed (~2.75 s later), so the rate is not diluted by dead time.
  const auto& step = doc["groups"][0]["transactions"][1];
  EXPECT_GT(step["transactions"].get<std::uint64_t>(), 0U);
  EXPECT_LT(step["elapsed_s"].get<double>(), 3.5) << step["elapsed_s"];
  // ... nor shrunk to nothing: the engine, stopped by the failure, never closed the window, and
  // the step must not report its transactions at 0 txn/s over 0.00 s.
  EXPECT_GT(step["elapsed_s"].get<double>(), 0.5) << step["elapsed_s"];
  EXPECT_GT(step["transactions_per_s"].get<double>(), 0.0) << step;
}

TEST(MasterLiveness, GroupWithNoIterationFailsUnlessAllowed) {
  // Group "idle" thinks longer than its step lasts: it never completes an iteration, so the run
  // must not say ok.
  TempDir dir;
  const auto profile = dir.write("idle.xml", R"XML(<?xml version="1.0"?>
<profile name="idle group">
  <group nthreads="2" name="busy">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp"/></transaction>
    <transaction duration="400ms">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
  </group>
  <group nthreads="1" name="idle">
    <transaction iterations="1"><flowop type="think" options="duration=1ms"/></transaction>
    <transaction duration="400ms"><flowop type="think" options="duration=5s"/></transaction>
  </group>
</profile>
)XML");
  const auto out = dir.path() / "r.json";
  const auto r = run_volley({"run", profile, "--local", "--json", out, "-q"}, 60s);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("group 'idle' completed no iteration of transaction"), std::string::npos)
      << r.err;
  EXPECT_EQ(read_json(out)["status"], "failed");
  const auto allowed = run_volley({"run", profile, "--local", "--allow-empty", "-q"}, 60s);
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
}

/// A master-side accept from two slaves: each slave connects back to the master by the address
/// the master has on that slave's control connection.
void run_accept_from_two(const std::string& a, const std::string& b) {
  TempDir dir;
  const std::uint16_t port = free_port();
  LivenessServe first(a, port);
  LivenessServe second(b, port);
  const auto profile = dir.write("accept.xml", R"XML(<?xml version="1.0"?>
<profile name="accept from two">
  <group nthreads="2" name="from-a">
    <transaction iterations="1"><flowop type="accept" options="remotehost=$a protocol=tcp"/></transaction>
    <transaction duration="400ms">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
  <group nthreads="3" name="from-b">
    <transaction iterations="1"><flowop type="accept" options="remotehost=$b protocol=tcp"/></transaction>
    <transaction duration="400ms">
      <flowop type="write" options="size=1k"/>
      <flowop type="read" options="size=16"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML");
  const auto out = dir.path() / "r.json";
  const auto r = run_volley({"run", profile, "-P", std::to_string(port), "--set", "a=" + a, "--set",
                             "b=" + b, "--json", out, "-q"},
                            60s);
  first.stop(5s);
  second.stop(5s);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = read_json(out);
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  EXPECT_EQ(doc["totals"]["connections_established"].get<std::uint64_t>(), 5U);
  // Each slave matches its own share of the master's traffic, and together they match it all.
  for (const auto& c : doc["comparison"]) {
    EXPECT_EQ(c["master_bytes"], c["slave_bytes"]) << c["host"];
    EXPECT_GT(c["master_bytes"].get<std::uint64_t>(), 0U) << c["host"];
  }
  EXPECT_EQ(doc["comparison_sum"]["master_bytes"], doc["comparison_sum"]["slaves_bytes"]);
}

TEST(MasterLiveness, AcceptFromTwoSlavesOnTwoLoopbackAddresses) {
  run_accept_from_two("127.0.0.1", "127.0.0.2");
}

TEST(MasterLiveness, AcceptFromSlavesOnIpv4AndIpv6) {
  // Two networks the master reaches by different local addresses (127.0.0.1 and ::1): a data
  // listener bound to the first slave's address refused the second.
  if (!ipv6_loopback_available()) GTEST_SKIP() << "no IPv6 loopback here";
  run_accept_from_two("127.0.0.1", "::1");
}

}  // namespace
}  // namespace volley::test
