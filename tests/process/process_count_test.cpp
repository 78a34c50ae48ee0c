// process_count(): how many processes a side spreads over, from the profile, the descriptor limit
// and the cores (docs/profile-reference.md, "nprocs: processes").
#include "volley/process/process_count.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "volley/profile/parser.hpp"

namespace volley::process {
namespace {

struct Compiled {
  profile::Profile profile;
  engine::Plan plan;
};

/// A ping-pong group of `n` strands, written with `attribute` (nprocs or nthreads).
Compiled pingpong(const std::string& attribute, std::uint64_t n) {
  const std::string text = fmt::format(R"XML(<?xml version="1.0"?>
<profile name="p">
  <group {}="{}">
    <transaction iterations="1"><flowop type="connect" options="remotehost=h protocol=tcp"/></transaction>
    <transaction duration="1s"><flowop type="write" options="size=64"/><flowop type="read" options="size=64"/></transaction>
  </group>
</profile>
)XML",
                                       attribute, n);
  auto parsed = profile::parse_profile(text, "p.xml", {});
  EXPECT_TRUE(parsed.profile.has_value()) << parsed.diagnostics.format(nullptr);
  core::Diagnostics diags;
  auto plan = engine::compile(*parsed.profile, {}, diags);
  EXPECT_TRUE(plan.has_value());
  return {std::move(*parsed.profile), std::move(*plan)};
}

ProcessBudget machine(std::uint64_t open_files, std::uint32_t cores, std::uint32_t requested = 0) {
  return ProcessBudget{requested, open_files, cores};
}

TEST(ProcessCount, ThreadsStayInOneProcess) {
  const auto c = pingpong("nthreads", 50000);
  EXPECT_EQ(process_count(c.profile, c.plan, machine(20000, 2)), 1U);
}

TEST(ProcessCount, NprocsGetsOneProcessPerCoreButNoMoreThanStrands) {
  const auto eight = pingpong("nprocs", 8);
  EXPECT_EQ(process_count(eight.profile, eight.plan, machine(20000, 2)), 2U);
  const auto one = pingpong("nprocs", 1);
  EXPECT_EQ(process_count(one.profile, one.plan, machine(20000, 4)), 1U);
  const auto three = pingpong("nprocs", 3);
  EXPECT_EQ(process_count(three.profile, three.plan, machine(20000, 16)), 3U);
}

TEST(ProcessCount, EnoughProcessesForTheDescriptorsConnectionsNeed) {
  // 20,000 descriptors less 10 % and 256: 17,744 connections a process.
  EXPECT_EQ(connection_budget(20000), 17744U);
  const auto c = pingpong("nprocs", 50000);
  EXPECT_EQ(connections_needed(c.plan), 50000U);
  EXPECT_EQ(process_count(c.profile, c.plan, machine(20000, 2)), 3U);
  EXPECT_EQ(process_count(c.profile, c.plan, machine(1024, 2)), kMaxProcesses);
  EXPECT_EQ(process_count(c.profile, c.plan, machine(1'000'000, 2)), 2U);
}

TEST(ProcessCount, TheFlagDecidesButNeverMoreThanStrands) {
  const auto c = pingpong("nprocs", 50000);
  EXPECT_EQ(process_count(c.profile, c.plan, machine(20000, 2, 1)), 1U);
  EXPECT_EQ(process_count(c.profile, c.plan, machine(20000, 2, 7)), 7U);
  const auto threads = pingpong("nthreads", 4);
  EXPECT_EQ(process_count(threads.profile, threads.plan, machine(20000, 2, 3)), 3U);
  EXPECT_EQ(process_count(threads.profile, threads.plan, machine(20000, 2, 9)), 4U);
}

}  // namespace
}  // namespace volley::process
