#include "volley/sampling/cpu_sampler.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/temp_dir.hpp"

namespace volley::sampling {
namespace {

using namespace std::chrono_literals;

using TempRoot = test::TempDir;

constexpr const char* kProcStat =
    "cpu  100 0 50 800 10 5 5 30 7 0\n"
    "cpu0 60 0 30 400 5 3 2 15 7 0\n"
    "cpu2 40 0 20 400 5 2 3 15 0 0\n"
    "intr 12345 0 0\n"
    "ctxt 999\n"
    "btime 1700000000\n"
    "procs_running 2\n";

TEST(ParseProcStatTest, ReadsAggregateAndPerCpuLinesWithGaps) {
  const auto stat = parse_proc_stat(kProcStat);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->total, (CpuTimes{100, 0, 50, 800, 10, 5, 5, 30}));
  EXPECT_EQ(stat->total.total(), 1000u);
  ASSERT_EQ(stat->per_cpu.size(), 2u);
  EXPECT_EQ(stat->per_cpu[0].cpu, 0u);
  EXPECT_EQ(stat->per_cpu[1].cpu, 2u);
  EXPECT_EQ(stat->per_cpu[1].times, (CpuTimes{40, 0, 20, 400, 5, 2, 3, 15}));
}

TEST(ParseProcStatTest, OldFourFieldFormatAndMalformedLines) {
  const auto stat = parse_proc_stat("cpu 1 2 3 4\ncpu0 1 2 x 4\ncpuX 1 2 3 4\ncpu1 1 2\n");
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->total, (CpuTimes{1, 2, 3, 4, 0, 0, 0, 0}));
  EXPECT_TRUE(stat->per_cpu.empty());
  EXPECT_FALSE(parse_proc_stat("").has_value());
  EXPECT_FALSE(parse_proc_stat("cpu0 1 2 3 4\nintr 5\n").has_value());
  EXPECT_FALSE(parse_proc_stat("cpu 1 2 -3 4\n").has_value());
}

TEST(SampleCpuTest, ReadsFakeRootAndRecordsMissingStat) {
  TempRoot root;
  root.write("proc/stat", kProcStat);
  const auto before = std::chrono::steady_clock::now();
  const auto s = sample_cpu(root.path());
  ASSERT_TRUE(s.host.has_value());
  EXPECT_EQ(s.host->total.user, 100u);
  EXPECT_TRUE(s.process.has_value());
  EXPECT_GE(s.taken, before);

  TempRoot empty;
  const auto none = sample_cpu(empty.path());
  EXPECT_FALSE(none.host.has_value());
  EXPECT_TRUE(none.process.has_value());
  root.write("proc/stat", "garbage\n");
  EXPECT_FALSE(sample_cpu(root.path()).host.has_value());
}

CpuSample make_sample(std::chrono::steady_clock::time_point t, CpuTimes total,
                      std::vector<PerCpuTimes> cpus, std::chrono::microseconds user,
                      std::chrono::microseconds system) {
  return CpuSample{t, ProcStat{total, std::move(cpus)}, ProcessCpuTimes{user, system}};
}

TEST(CpuUsageTest, PercentagesHottestCoreAndProcess) {
  const auto t0 = std::chrono::steady_clock::time_point{} + 10s;
  // Deltas: user 30, nice 10, system 20, idle 100, iowait 10, irq 5, softirq 5, steal 20 (= 200).
  const auto before = make_sample(t0, {100, 0, 50, 800, 10, 5, 5, 30},
                                  {{0, {0, 0, 0, 0, 0, 0, 0, 0}}, {3, {0, 0, 0, 0, 0, 0, 0, 0}}},
                                  1'000'000us, 250'000us);
  const auto after = make_sample(t0 + 2s, {130, 10, 70, 900, 20, 10, 10, 50},
                                 {{3, {10, 0, 10, 80, 0, 0, 0, 0}},  // 20% busy
                                  {0, {80, 0, 10, 10, 0, 0, 0, 0}},  // 90% busy
                                  {5, {1, 1, 1, 1, 0, 0, 0, 0}}},    // not in `before`
                                 2'500'000us, 750'000us);
  const auto u = cpu_usage(before, after);
  EXPECT_DOUBLE_EQ(u.wall_s, 2.0);
  ASSERT_TRUE(u.total.has_value());
  EXPECT_DOUBLE_EQ(u.total->usr_pct, 20.0);
  EXPECT_DOUBLE_EQ(u.total->sys_pct, 10.0);
  EXPECT_DOUBLE_EQ(u.total->irq_pct, 2.5);
  EXPECT_DOUBLE_EQ(u.total->softirq_pct, 2.5);
  EXPECT_DOUBLE_EQ(u.total->iowait_pct, 5.0);
  EXPECT_DOUBLE_EQ(u.total->steal_pct, 10.0);
  EXPECT_DOUBLE_EQ(u.total->idle_pct, 50.0);
  EXPECT_DOUBLE_EQ(u.total->busy_pct, 45.0);
  ASSERT_EQ(u.per_cpu.size(), 2u);
  EXPECT_EQ(u.per_cpu[0].cpu, 0u);
  EXPECT_EQ(u.per_cpu[1].cpu, 3u);
  EXPECT_DOUBLE_EQ(u.per_cpu[0].usage.busy_pct, 90.0);
  EXPECT_DOUBLE_EQ(u.per_cpu[1].usage.busy_pct, 20.0);
  ASSERT_TRUE(u.hottest.has_value());
  EXPECT_EQ(u.hottest->cpu, 0u);
  EXPECT_DOUBLE_EQ(u.hottest->busy_pct, 90.0);
  ASSERT_TRUE(u.process.has_value());
  EXPECT_DOUBLE_EQ(u.process->user_s, 1.5);
  EXPECT_DOUBLE_EQ(u.process->sys_s, 0.5);
  EXPECT_DOUBLE_EQ(u.process->cores, 1.0);
  EXPECT_DOUBLE_EQ(u.process->core_pct, 100.0);
}

TEST(CpuUsageTest, BackwardsCountersAndNoElapsedTimeClampToZero) {
  const auto t0 = std::chrono::steady_clock::time_point{} + 10s;
  const auto before = make_sample(t0, {500, 0, 500, 500, 0, 0, 0, 0}, {}, 900us, 900us);
  const auto after = make_sample(t0, {100, 0, 100, 100, 0, 0, 0, 0}, {}, 100us, 100us);
  const auto u = cpu_usage(before, after);
  EXPECT_EQ(u.wall_s, 0.0);
  ASSERT_TRUE(u.total.has_value());
  EXPECT_EQ(u.total->busy_pct, 0.0);
  EXPECT_EQ(u.total->idle_pct, 0.0);
  EXPECT_FALSE(u.hottest.has_value());
  ASSERT_TRUE(u.process.has_value());
  EXPECT_EQ(u.process->user_s, 0.0);
  EXPECT_EQ(u.process->cores, 0.0);
  // Samples taken in the wrong order give wall_s 0, not a negative duration.
  EXPECT_EQ(cpu_usage(make_sample(t0 + 1s, {}, {}, 0us, 0us), before).wall_s, 0.0);
}

TEST(CpuUsageTest, MissingSourcesStayMissing) {
  CpuSample a;
  CpuSample b;
  b.taken = a.taken + 1s;
  const auto u = cpu_usage(a, b);
  EXPECT_DOUBLE_EQ(u.wall_s, 1.0);
  EXPECT_FALSE(u.total.has_value());
  EXPECT_TRUE(u.per_cpu.empty());
  EXPECT_FALSE(u.hottest.has_value());
  EXPECT_FALSE(u.process.has_value());
  const nlohmann::json j = u;
  EXPECT_TRUE(j.at("total").is_null());
  EXPECT_TRUE(j.at("hottest_cpu").is_null());
  EXPECT_TRUE(j.at("process").is_null());
}

TEST(CpuUsageTest, JsonKeys) {
  const auto t0 = std::chrono::steady_clock::time_point{};
  const auto u = cpu_usage(make_sample(t0, {}, {{1, {}}}, 0us, 0us),
                           make_sample(t0 + 1s, {10, 0, 10, 80, 0, 0, 0, 0},
                                       {{1, {10, 0, 10, 80, 0, 0, 0, 0}}}, 500'000us, 0us));
  const nlohmann::json j = u;
  EXPECT_EQ(j.at("wall_s"), 1.0);
  for (const char* key : {"usr_pct", "sys_pct", "irq_pct", "softirq_pct", "iowait_pct", "steal_pct",
                          "idle_pct", "busy_pct"}) {
    EXPECT_TRUE(j.at("total").contains(key)) << key;
    EXPECT_TRUE(j.at("per_cpu").at(0).contains(key)) << key;
  }
  EXPECT_EQ(j.at("total").at("busy_pct"), 20.0);
  EXPECT_EQ(j.at("per_cpu").at(0).at("cpu"), 1);
  EXPECT_EQ(j.at("hottest_cpu").at("cpu"), 1);
  EXPECT_EQ(j.at("hottest_cpu").at("busy_pct"), 20.0);
  EXPECT_EQ(j.at("process").at("user_s"), 0.5);
  EXPECT_EQ(j.at("process").at("sys_s"), 0.0);
  EXPECT_EQ(j.at("process").at("core_pct"), 50.0);
  EXPECT_EQ(j.at("process").at("cores"), 0.5);
}

TEST(CpuSamplerTest, InterfaceOverFakeRoot) {
  TempRoot root;
  root.write("proc/stat", kProcStat);
  ProcCpuSampler sampler(root.path());
  CpuSampler& s = sampler;
  const auto sample = s.sample();
  ASSERT_TRUE(sample.host.has_value());
  EXPECT_EQ(sample.host->per_cpu.size(), 2u);
}

TEST(CpuSamplerTest, RealHostSmoke) {
  const auto a = sample_cpu();
  volatile double sink = 0;
  for (int i = 0; i < 200'000; ++i) sink = sink + 1.0;
  const auto b = sample_cpu();
  EXPECT_TRUE(a.host.has_value());
  EXPECT_TRUE(a.process.has_value());
  const auto u = cpu_usage(a, b);
  EXPECT_GE(u.wall_s, 0.0);
  nlohmann::json j = u;
  EXPECT_TRUE(j.contains("per_cpu"));
}

}  // namespace
}  // namespace volley::sampling
