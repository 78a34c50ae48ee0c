// Writes with zerocopy through the CLI (`volley run --local`): the bytes agree on both sides, and
// the JSON document and the final report say how many sends the kernel copied (on loopback, all).
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "support/local_run.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

TEST(ZeroCopy, BulkWritesAgreeOnBothSidesAndEverySendIsReportedCopiedOnLoopback) {
  TempDir dir;
  const LocalRun run = run_local(dir, R"XML(<?xml version="1.0"?>
<profile name="zerocopy">
  <group nthreads="1">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp"/></transaction>
    <transaction duration="1s"><flowop type="write" options="size=256k zerocopy"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML",
                                 {"--set", "h=127.0.0.1"});
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  const nlohmann::json& doc = run.doc;
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  ASSERT_EQ(doc["comparison"].size(), 1U);
  EXPECT_EQ(doc["comparison"][0]["master_bytes"], doc["comparison"][0]["slave_bytes"]);
  const auto& write = doc["groups"][0]["transactions"][1]["flowops"][0];
  const auto& read = doc["slaves"][0]["groups"][0]["transactions"][1]["flowops"][0];
  EXPECT_EQ(write["bytes_written"], read["bytes_read"]);
  const auto ops = write["ops"].get<std::uint64_t>();
  EXPECT_GT(ops, 100U);
  ASSERT_TRUE(write.contains("zerocopy")) << write.dump();
  const auto& zc = write["zerocopy"];
  const auto sends = zc["sends"].get<std::uint64_t>();
  EXPECT_GE(sends, ops) << "a send per write at least";
  EXPECT_EQ(zc["copied"].get<std::uint64_t>(), sends) << "loopback copies every send";
  EXPECT_EQ(zc["zero_copied"].get<std::uint64_t>(), 0U);
  EXPECT_EQ(zc["unconfirmed"].get<std::uint64_t>(), 0U)
      << "the slave read every byte before the disconnect step";
  EXPECT_EQ(zc["copied_pct"].get<double>(), 100.0);
  EXPECT_FALSE(read.contains("zerocopy")) << "the slave's mirror is a plain read";
  const std::string& report = run.process.out;
  EXPECT_NE(report.find("Zero-copy writes"), std::string::npos) << report;
  EXPECT_NE(report.find(std::to_string(sends)), std::string::npos) << report;
  EXPECT_NE(report.find("copied by the kernel: 100% (loopback"), std::string::npos) << report;
}

TEST(ZeroCopy, OnAReadTheRunStopsAtTheProfileWithExit2) {
  TempDir dir;
  const LocalRun run = run_local(dir, R"XML(<?xml version="1.0"?>
<profile name="zerocopy">
  <group nthreads="1">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp"/></transaction>
    <transaction iterations="1"><flowop type="read" options="size=64k zerocopy"/></transaction>
  </group>
</profile>
)XML",
                                 {"--set", "h=127.0.0.1"});
  EXPECT_EQ(run.process.exit_code, 2);
  EXPECT_NE(run.process.err.find("p.xml:5:"), std::string::npos) << run.process.err;
  EXPECT_NE(run.process.err.find("option 'zerocopy' applies to write and send only"),
            std::string::npos)
      << run.process.err;
}

}  // namespace
}  // namespace volley::test
