// A slave you can leave running: every state a peer can put a session in is refused or survived,
// SIGTERM always works, limits are enforced with sentences that name their flag. Each test speaks
// the control protocol directly (tests/support/control_client), as a broken or hostile master.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/control_client.hpp"
#include "support/process.hpp"
#include "support/serve.hpp"
#include "support/temp_dir.hpp"
#include "volley/control/message.hpp"

namespace volley::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

/// One strand: connects, then spins for 30 s; on the slave it accepts, then spins.
const char* kBusyThink = R"XML(<?xml version="1.0"?>
<profile name="think"><group nthreads="1">
  <transaction iterations="1">
    <flowop type="connect" options="remotehost=127.0.0.1 protocol=tcp"/>
    <flowop type="think" options="duration=30s busy"/>
  </transaction>
</group></profile>)XML";

/// Drives a session until the slave's strand is spinning in its think (we play the master's
/// data connection). Returns the data connection's descriptor.
int start_busy_think(ControlClient& c) {
  EXPECT_TRUE(c.send(load_message(kBusyThink)));
  const auto loaded = c.receive_type("loaded");
  EXPECT_TRUE(loaded);
  if (!loaded) return -1;
  EXPECT_TRUE(c.send(control_message("start", {{"master_port", 1}})));
  EXPECT_TRUE(c.send(control_message("proceed", {{"step", 0}})));
  const int fd = connect_data(negotiated_port(*loaded), 7);
  EXPECT_GE(fd, 0);
  std::this_thread::sleep_for(300ms);
  return fd;
}

/// SIGTERM ends the slave within the limit with status 0; how long it took.
void expect_prompt_exit(Serve& serve, const char* state) {
  const auto start = Clock::now();
  const auto r = serve.terminate(5s);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  EXPECT_FALSE(r.timed_out) << state << ": SIGTERM ignored\n" << r.err;
  EXPECT_EQ(r.exit_code, 0) << state << "\n" << r.err;
  // 2 s is the promise; the machine is loaded, so the test only guards against a hang.
  EXPECT_LT(took, 5s) << state;
}

/// A full, real run against the slave succeeds (exit 0).
void expect_serves_a_real_run(const Serve& serve) {
  const auto r = run_pingpong(serve);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(SlaveSafety, FinishBeforeTheLastStepIsRefusedAndTheSlaveStaysAlive) {
  Serve serve;
  {
    ControlClient c(serve.port());
    ASSERT_TRUE(c.greet());
    ASSERT_TRUE(c.send(load_message(pingpong("2", "20s"))));
    ASSERT_TRUE(c.receive_type("loaded"));
    ASSERT_TRUE(c.send(control_message("start", {{"master_port", 1}})));
    ASSERT_TRUE(c.send(control_message("finish")));
    const auto refused = c.receive_type("error");
    ASSERT_TRUE(refused);
    EXPECT_NE(refused->value("message", "").find("finish"), std::string::npos) << *refused;
    // The session is alive and answers in order.
    ASSERT_TRUE(c.send(control_message("proceed", {{"step", 1}})));
    const auto out_of_order = c.receive_type("error");
    ASSERT_TRUE(out_of_order);
    EXPECT_NE(out_of_order->value("message", "").find("out of order"), std::string::npos);
    // Another master is served meanwhile.
    expect_serves_a_real_run(serve);
  }
  expect_serves_a_real_run(serve);
  expect_prompt_exit(serve, "after a refused finish");
}

TEST(SlaveSafety, EveryOutOfStateMessageIsRefusedWithoutEndingTheSession) {
  Serve serve;
  ControlClient c(serve.port());
  ASSERT_TRUE(c.greet());
  const std::vector<json> before_load = {
      control_message("start", {{"master_port", 1}}), control_message("proceed", {{"step", 0}}),
      control_message("end_step", {{"step", 0}}), control_message("finish"),
      control_message("no_such_type")};
  for (const auto& m : before_load) {
    ASSERT_TRUE(c.send(m));
    const auto answer = c.receive_type("error");
    ASSERT_TRUE(answer) << m;
  }
  ASSERT_TRUE(c.send(load_message(pingpong("1", "20s"))));
  ASSERT_TRUE(c.receive_type("loaded"));
  ASSERT_TRUE(c.send(load_message(pingpong("1", "20s"))));  // a second load
  auto second = c.receive_type("error");
  ASSERT_TRUE(second);
  EXPECT_NE(second->value("message", "").find("already loaded"), std::string::npos) << *second;
  ASSERT_TRUE(c.send(control_message("start", {{"master_port", 1}})));
  ASSERT_TRUE(c.send(control_message("start", {{"master_port", 1}})));  // a second start
  ASSERT_TRUE(c.receive_type("error"));
  ASSERT_TRUE(c.send(control_message("end_step", {{"step", 0}})));  // before its proceed
  ASSERT_TRUE(c.receive_type("error"));
  ASSERT_TRUE(c.send(control_message("proceed", {{"step", 99}})));  // beyond the plan
  ASSERT_TRUE(c.receive_type("error"));
  ASSERT_TRUE(c.send(control_message("bye")));
  EXPECT_TRUE(c.closed_within(5s));
  expect_serves_a_real_run(serve);
  expect_prompt_exit(serve, "after refused messages");
}

TEST(SlaveSafety, SigtermStopsTheSlaveInEveryState) {
  // Each state a session can be in when the operator stops the slave.
  const std::vector<std::string> states = {"idle",    "connected", "greeted",   "loaded",
                                           "started", "released",  "busy-think"};
  for (const auto& state : states) {
    Serve serve;
    if (state == "idle") {
      expect_prompt_exit(serve, "idle");
      continue;
    }
    ControlClient c(serve.port());
    ASSERT_TRUE(c.connected());
    if (state != "connected") {
      ASSERT_TRUE(c.greet()) << state;
    }
    int data_fd = -1;
    if (state == "busy-think") data_fd = start_busy_think(c);
    if (state == "loaded" || state == "started" || state == "released") {
      ASSERT_TRUE(c.send(load_message(pingpong("2", "20s"))));
      ASSERT_TRUE(c.receive_type("loaded")) << state;
    }
    if (state == "started" || state == "released") {
      ASSERT_TRUE(c.send(control_message("start", {{"master_port", 1}})));
    }
    if (state == "released") {
      ASSERT_TRUE(c.send(control_message("proceed", {{"step", 0}})));
      std::this_thread::sleep_for(300ms);
    }
    expect_prompt_exit(serve, state.c_str());
    if (data_fd >= 0) ::close(data_fd);
  }
}

TEST(SlaveSafety, AMasterThatVanishesDuringABusyThinkFreesTheSlaveAtOnce) {
  Serve serve;
  {
    ControlClient c(serve.port());
    ASSERT_TRUE(c.greet());
    const int data_fd = start_busy_think(c);
    ASSERT_TRUE(c.send(control_message("abort", {{"reason", "test"}})));
    if (data_fd >= 0) ::close(data_fd);
  }
  // The control thread never waits on the thinking worker: another master is served now.
  const auto start = Clock::now();
  expect_serves_a_real_run(serve);
  EXPECT_LT(Clock::now() - start, 20s);
  expect_prompt_exit(serve, "after an abort during a busy think");
}

TEST(SlaveSafety, ALoadWhoseEngineCannotBeBuiltCostsOnlyThatLoad) {
#ifdef VOLLEY_SANITIZED
  // UBSan's vptr check reads memory through a pipe; in a slave that has used up its 64
  // descriptors it cannot, and reports the boost::system_error being thrown as a bad object.
  // The normal build runs this test; the use-after-free it guards against was found without
  // sanitizers too (MALLOC_PERTURB_, valgrind).
  GTEST_SKIP() << "needs free descriptors for UBSan's own checks; runs in the normal build";
#endif
  // 64 descriptors: a run with hundreds of workers cannot get its event loops.
  Serve serve({"--max-workers", "1024"}, {"/usr/bin/prlimit", "--nofile=64:64"});
  {
    ControlClient c(serve.port());
    ASSERT_TRUE(c.greet());
    ASSERT_TRUE(c.send(load_message(pingpong("500", "1s"), 500)));
    const auto rejected = c.receive_type("rejected");
    ASSERT_TRUE(rejected) << "slave's stderr:\n" << serve.process().stderr_so_far();
    EXPECT_NE(rejected->value("message", "").find("cannot build"), std::string::npos) << *rejected;
    // The session goes on: a small load is accepted.
    ASSERT_TRUE(c.send(load_message(pingpong("1", "1s"))));
    EXPECT_TRUE(c.receive_type("loaded"));
  }
  expect_serves_a_real_run(serve);
  expect_prompt_exit(serve, "after a load that could not be built");
}

TEST(SlaveSafety, LimitsAreRefusedNamingTheFlag) {
  Serve serve({"--max-strands", "10", "--max-think", "2s", "--max-run", "1min", "--max-workers",
               "4", "--max-profile-bytes", "4000"});
  struct Case {
    std::string profile;
    std::size_t workers;
    std::string flag;
  };
  const std::vector<Case> cases = {
      {pingpong("11", "1s"), 0, "--max-strands"},
      {pingpong("1", "120s"), 0, "--max-run"},  // in a profile "2min" is uperf's 2 ms
      {pingpong("1", "1s", R"(<flowop type="think" options="duration=3s"/>)"), 0, "--max-think"},
      {pingpong("1", "1s"), 5, "--max-workers"},
      {pingpong("1", "1s") + std::string(5000, ' '), 0, "--max-profile-bytes"},
  };
  ControlClient c(serve.port());
  ASSERT_TRUE(c.greet());
  for (const auto& k : cases) {
    ASSERT_TRUE(c.send(load_message(k.profile, k.workers)));
    const auto rejected = c.receive_type("rejected");
    ASSERT_TRUE(rejected) << k.flag;
    EXPECT_NE(rejected->value("message", "").find(k.flag), std::string::npos) << *rejected;
  }
}

TEST(SlaveSafety, AMasterSeesTheSlavesLimitInsteadOfABrokenPipe) {
  Serve serve({"--max-profile-bytes", "4000"});
  TempDir dir;
  const auto profile =
      dir.write("big.xml", pingpong("1", "300ms") + "<!--" + std::string(8000, 'x') + "-->\n");
  const auto r = run_volley({"run", profile.string(), "-P", serve.port_text(), "-q"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("--max-profile-bytes"), std::string::npos) << r.err;
}

TEST(SlaveSafety, SessionsBeyondTheLimitAreRefusedAtOnce) {
  Serve serve({"--max-sessions", "1"});
  std::this_thread::sleep_for(300ms);  // the constructor's probe connection has left
  ControlClient first(serve.port());
  ASSERT_TRUE(first.greet());
  ControlClient second(serve.port());
  ASSERT_TRUE(second.send(control::make_hello()));  // a slot is taken by a greeted session only
  const auto refused = second.receive_type("error");
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->value("message", "").find("--max-sessions"), std::string::npos) << *refused;
  EXPECT_TRUE(second.closed_within(5s));
}

}  // namespace
}  // namespace volley::test
