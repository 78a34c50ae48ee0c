// A paced transaction's schedule through the real CLI (`volley run --local`): each report shows
// the iterations its schedule asked for and those done, and a run that fell behind its rate
// fails saying so (docs/results.md, "The rate rule"), while one that keeps it passes.
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/local_run.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

/// `strands` strands, each connecting once, then for `duration` writing and reading 64 bytes
/// `rate` times a second, with a think of `think` in each iteration (none when empty).
std::string paced_rate_profile(int strands, const std::string& duration, const std::string& rate,
                               const std::string& think) {
  const std::string thinking =
      think.empty() ? std::string()
                    : fmt::format(R"(      <flowop type="think" options="duration={}"/>
)",
                                  think);
  return fmt::format(R"XML(<?xml version="1.0"?>
<profile name="paced rate">
  <group nthreads="{}">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp"/></transaction>
    <transaction duration="{}" rate="{}">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
{}    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML",
                     strands, duration, rate, thinking);
}

// 50,000 iterations a second per strand (rate="50k" would be 51,200: k is 1,024), each thinking 2
// ms: at most 500 a second are possible. The run measured what it did, and fails naming the
// transaction and how far behind it was.
TEST(PacedRate, ARateThatCannotBeKeptFailsSayingSo) {
  TempDir dir;
  const LocalRun run = run_local(dir, paced_rate_profile(2, "1s", "50000", "2ms"));
  ASSERT_FALSE(run.process.timed_out) << run.process.err;
  EXPECT_EQ(run.process.exit_code, 1) << run.process.err;
  ASSERT_TRUE(run.doc.is_object()) << run.process.err;
  EXPECT_EQ(run.doc["status"], "failed");
  const std::string failure = run.doc.value("failure", "");
  EXPECT_NE(failure.find("group 0 transaction 1 fell behind its rate: "), std::string::npos)
      << failure;
  EXPECT_NE(failure.find(" of 100,000 scheduled iterations ("), std::string::npos) << failure;
  EXPECT_NE(run.process.err.find("fell behind its rate"), std::string::npos) << run.process.err;
  // Everything measured is still reported.
  const auto& txn = run.doc["groups"][0]["transactions"][1];
  ASSERT_TRUE(txn.contains("schedule")) << txn.dump();
  EXPECT_EQ(txn["schedule"]["scheduled"], 100000);
  EXPECT_GT(txn["schedule"]["done"].get<std::uint64_t>(), 0U);
  EXPECT_LT(txn["schedule"]["done"].get<std::uint64_t>(), 1100U);
  EXPECT_EQ(txn["schedule"]["done"], txn["transactions"]);
}

// 20 a second per strand, 4 strands for a second: the schedule asks for 80 (each strand's 20
// from its own phase), and a round trip of 64 bytes on loopback takes far less than the 50 ms
// period, so the run keeps it and passes.
TEST(PacedRate, AnEasilyKeptRatePasses) {
  TempDir dir;
  const LocalRun run = run_local(dir, paced_rate_profile(4, "1s", "20", ""));
  ASSERT_FALSE(run.process.timed_out) << run.process.err;
  EXPECT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_TRUE(run.doc.is_object()) << run.process.err;
  EXPECT_EQ(run.doc["status"], "ok") << run.doc["failure"];
  const auto& txn = run.doc["groups"][0]["transactions"][1];
  ASSERT_TRUE(txn.contains("schedule")) << txn.dump();
  EXPECT_EQ(txn["schedule"]["scheduled"], 80);
  EXPECT_GE(txn["schedule"]["done"].get<std::uint64_t>(), 76U);
  EXPECT_LE(txn["schedule"]["done"].get<std::uint64_t>(), 80U);
  // Unpaced and iterations steps have no schedule.
  EXPECT_FALSE(run.doc["groups"][0]["transactions"][0].contains("schedule"));
  EXPECT_FALSE(run.doc["groups"][0]["transactions"][2].contains("schedule"));
}

}  // namespace
}  // namespace volley::test
