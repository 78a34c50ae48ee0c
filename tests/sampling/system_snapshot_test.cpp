#include "volley/sampling/system_snapshot.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/temp_dir.hpp"
#include "volley/sampling/text_file.hpp"

namespace volley::sampling {
namespace {

using nlohmann::json;

using TempRoot = test::TempDir;

// A small but complete host: two CPUs (cpu1 without scaling_cur_freq), eth0 with two rx queues
// and IRQs, lo without a speed file.
void write_host(const TempRoot& root) {
  root.write("proc/sys/kernel/osrelease", "6.1.0-18-amd64\n");
  root.write("proc/sys/kernel/ostype", "Linux\n");
  root.write("proc/version", "Linux version 6.1.0-18-amd64 (gcc 12.2.0) #1 SMP\n");
  root.write("proc/sys/kernel/hostname", "bench-a\n");
  root.write("proc/cpuinfo",
             "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold\n\n"
             "processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Gold\n");
  root.write("sys/devices/system/cpu/online", "0-1\n");
  root.write("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
  root.write("sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "2400000\n");
  root.write("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "powersave\n");
  root.mkdir("sys/devices/system/cpu/cpuidle");
  root.write("proc/meminfo", "MemTotal:       16318480 kB\nMemFree:  1000 kB\n");
  root.write("proc/sys/net/core/rmem_max", "212992\n");
  root.write("proc/sys/net/core/somaxconn", "4096\n");
  root.write("proc/sys/net/ipv4/tcp_rmem", "4096\t131072\t6291456\n");
  root.write("proc/sys/net/ipv4/tcp_congestion_control", "cubic\n");
  root.write("proc/sys/net/ipv4/ip_forward", "0\n");  // not tcp_*: left out
  root.write("sys/class/net/eth0/mtu", "1500\n");
  root.write("sys/class/net/eth0/tx_queue_len", "1000\n");
  root.write("sys/class/net/eth0/operstate", "up\n");
  root.write("sys/class/net/eth0/speed", "25000\n");
  root.write("sys/class/net/eth0/queues/rx-0/rps_cpus", "0\n");
  root.write("sys/class/net/eth0/queues/rx-1/rps_cpus", "3\n");
  root.write("sys/class/net/eth0/queues/tx-0/xps_cpus", "1\n");
  root.write("sys/class/net/lo/mtu", "65536\n");
  root.write("sys/class/net/lo/tx_queue_len", "1000\n");
  root.write("sys/class/net/lo/operstate", "unknown\n");
  root.write("sys/class/net/lo/queues/rx-0/rps_cpus", "0\n");
  root.write("sys/class/net/lo/queues/tx-0/xps_cpus", "0\n");
  root.write("sys/class/net/bonding_masters", "");  // a file, not an interface
  root.write("proc/interrupts",
             "           CPU0       CPU1\n"
             " 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n"
             " 45:        100        200  PCI-MSI 524288-edge      eth0-TxRx-0\n"
             " 46:         10         20  PCI-MSI 524289-edge      eth0-TxRx-1\n"
             " 47:          1          2  PCI-MSI 524290-edge      eth01-TxRx-0\n"
             "NMI:          0          0   Non-maskable interrupts\n");
  root.write("proc/irq/45/smp_affinity_list", "0-1\n");
}

std::optional<std::string> fake_tc(const std::vector<std::string>& argv) {
  if (argv != std::vector<std::string>{"tc", "qdisc", "show"}) return std::nullopt;
  return std::string(
      "qdisc noqueue 0: dev lo root refcnt 2 \n"
      "qdisc mq 0: dev eth0 root \n"
      "qdisc fq_codel 0: dev eth0 parent :1 limit 10240p flows 1024\n"
      " quantum 1514 target 5ms\n");
}

TEST(SystemSnapshotTest, ReadsEverySourceFromFakeTree) {
  TempRoot root;
  write_host(root);
  const json s = read_system_snapshot(root.path(), fake_tc);
  EXPECT_EQ(s.at("schema_version"), 1);
  EXPECT_EQ(s.at("kernel").at("osrelease"), "6.1.0-18-amd64");
  EXPECT_EQ(s.at("kernel").at("ostype"), "Linux");
  EXPECT_EQ(s.at("kernel").at("version"), "Linux version 6.1.0-18-amd64 (gcc 12.2.0) #1 SMP");
  EXPECT_EQ(s.at("hostname"), "bench-a");
  const auto& cpu = s.at("cpu");
  EXPECT_EQ(cpu.at("model"), "Intel(R) Xeon(R) Gold");
  EXPECT_EQ(cpu.at("count"), 2);
  EXPECT_EQ(cpu.at("online"), "0-1");
  EXPECT_EQ(cpu.at("governor"), (json{{"cpu0", "performance"}, {"cpu1", "powersave"}}));
  EXPECT_EQ(cpu.at("cur_freq_khz").at("cpu0"), 2400000);
  EXPECT_TRUE(cpu.at("cur_freq_khz").at("cpu1").is_null());
  EXPECT_EQ(s.at("memory").at("total_kb"), 16318480);
  EXPECT_EQ(s.at("sysctl"), (json{{"net.core.rmem_max", "212992"},
                                  {"net.core.somaxconn", "4096"},
                                  {"net.ipv4.tcp_congestion_control", "cubic"},
                                  {"net.ipv4.tcp_rmem", "4096 131072 6291456"}}));
  const auto& ifs = s.at("interfaces");
  ASSERT_EQ(ifs.size(), 2u);
  const auto& eth0 = ifs.at("eth0");
  EXPECT_EQ(eth0.at("mtu"), 1500);
  EXPECT_EQ(eth0.at("tx_queue_len"), 1000);
  EXPECT_EQ(eth0.at("operstate"), "up");
  EXPECT_EQ(eth0.at("speed_mbps"), 25000);
  EXPECT_EQ(eth0.at("rx_queues"), 2);
  EXPECT_EQ(eth0.at("tx_queues"), 1);
  EXPECT_EQ(eth0.at("rps_cpus"), (json{{"rx-0", "0"}, {"rx-1", "3"}}));
  EXPECT_EQ(eth0.at("xps_cpus"), (json{{"tx-0", "1"}}));
  EXPECT_EQ(eth0.at("irqs"), (json{{"45", "0-1"}, {"46", nullptr}}));  // not 47 (eth01)
  EXPECT_EQ(eth0.at("qdisc"),
            "mq 0: root; fq_codel 0: parent :1 limit 10240p flows 1024 quantum 1514 target 5ms");
  const auto& lo = ifs.at("lo");
  EXPECT_EQ(lo.at("mtu"), 65536);
  EXPECT_TRUE(lo.at("speed_mbps").is_null());
  EXPECT_EQ(lo.at("irqs"), json::object());
  EXPECT_EQ(lo.at("qdisc"), "noqueue 0: root refcnt 2");
  EXPECT_EQ(s.at("missing"),
            (json{"cpu.cur_freq_khz.cpu1", "interfaces.eth0.irqs.46", "interfaces.lo.speed_mbps"}));
}

TEST(SystemSnapshotTest, EmptyRootRecordsEverythingMissing) {
  TempRoot root;
  json s;
  ASSERT_NO_THROW(s = read_system_snapshot(root.path()));
  EXPECT_TRUE(s.at("kernel").at("osrelease").is_null());
  EXPECT_TRUE(s.at("hostname").is_null());
  EXPECT_TRUE(s.at("cpu").at("model").is_null());
  EXPECT_TRUE(s.at("cpu").at("governor").is_null());
  EXPECT_TRUE(s.at("memory").at("total_kb").is_null());
  EXPECT_EQ(s.at("sysctl"), json::object());
  EXPECT_TRUE(s.at("interfaces").is_null());
  EXPECT_EQ(s.at("missing"),
            (json{"cpu.count", "cpu.cur_freq_khz", "cpu.governor", "cpu.model", "cpu.online",
                  "hostname", "interfaces", "kernel.osrelease", "kernel.ostype", "kernel.version",
                  "memory.total_kb", "qdisc", "sysctl.net.core", "sysctl.net.ipv4.tcp"}));
}

TEST(SystemSnapshotTest, UnreadableFileIsMissingNotFatal) {
  TempRoot root;
  write_host(root);
  // A directory where a file is expected makes read() fail (EISDIR), like EINVAL on real sysfs.
  std::filesystem::remove(root.path() / "sys/class/net/eth0/mtu");
  root.mkdir("sys/class/net/eth0/mtu");
  const json s = read_system_snapshot(root.path(), CommandRunner{});
  EXPECT_TRUE(s.at("interfaces").at("eth0").at("mtu").is_null());
  const auto& missing = s.at("missing");
  EXPECT_NE(std::find(missing.begin(), missing.end(), "interfaces.eth0.mtu"), missing.end());
  EXPECT_NE(std::find(missing.begin(), missing.end(), "qdisc"), missing.end());
  EXPECT_FALSE(s.at("interfaces").at("eth0").contains("qdisc"));
}

TEST(SystemSnapshotTest, DiffOfTwoTunings) {
  TempRoot root;
  write_host(root);
  const json a = read_system_snapshot(root.path(), fake_tc);
  EXPECT_TRUE(diff_snapshots(a, a).empty());
  root.write("proc/sys/net/core/rmem_max", "4194304\n");
  root.write("sys/class/net/lo/mtu", "1500\n");
  root.write("sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance\n");
  const json b = read_system_snapshot(root.path(), fake_tc);
  const auto d = diff_snapshots(a, b);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].to_string(), "cpu.governor.cpu1: powersave -> performance");
  EXPECT_EQ(d[1].to_string(), "interfaces.lo.mtu: 65536 -> 1500");
  EXPECT_EQ(d[2].to_string(), "sysctl.net.core.rmem_max: 212992 -> 4194304");
  EXPECT_EQ(d[1].key, "interfaces.lo.mtu");
  EXPECT_EQ(d[1].before, json(65536));
  EXPECT_EQ(d[1].after, json(1500));
}

TEST(SystemSnapshotTest, DiffAddedRemovedNullAndArrays) {
  const json a = {{"x", {{"a", 1}, {"gone", "y"}}}, {"missing", {"p"}}, {"n", nullptr}};
  const json b = {{"x", {{"a", 1}, {"new", {{"deep", true}}}}}, {"missing", {"p", "q"}}, {"n", 3}};
  const auto d = diff_snapshots(a, b);
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0].to_string(), R"(missing: ["p"] -> ["p","q"])");
  EXPECT_EQ(d[1].to_string(), "n: null -> 3");
  EXPECT_EQ(d[2].to_string(), "x.gone: y -> (absent)");
  EXPECT_EQ(d[3].to_string(), "x.new.deep: (absent) -> true");
  EXPECT_FALSE(d[2].after.has_value());
  EXPECT_FALSE(d[3].before.has_value());
}

TEST(RunCommandTest, CapturesOutputAndReportsFailure) {
  EXPECT_EQ(run_command({"sh", "-c", "echo hi; echo err >&2"}), std::optional<std::string>("hi\n"));
  EXPECT_FALSE(run_command({"sh", "-c", "exit 3"}).has_value());
  EXPECT_FALSE(run_command({"volley-no-such-command-xyz"}).has_value());
  EXPECT_FALSE(run_command({}).has_value());
}

TEST(TextFileTest, Helpers) {
  EXPECT_EQ(trim("  a b \n"), "a b");
  EXPECT_EQ(normalize_whitespace(" 4096\t131072  6291456\n"), "4096 131072 6291456");
  EXPECT_EQ(split_fields("  a  b\tc "), (std::vector<std::string_view>{"a", "b", "c"}));
  EXPECT_EQ(split_lines("a\nb\n"), (std::vector<std::string_view>{"a", "b"}));
  EXPECT_EQ(parse_u64("42"), 42u);
  EXPECT_FALSE(parse_u64("4 2").has_value());
  EXPECT_FALSE(parse_u64("-1").has_value());
  EXPECT_EQ(parse_i64("-1"), -1);
  EXPECT_FALSE(read_text_file("/nonexistent/volley/file").has_value());
}

TEST(SystemSnapshotTest, RealHostSmoke) {
  json s;
  ASSERT_NO_THROW(s = read_system_snapshot());
  EXPECT_EQ(s.at("schema_version"), 1);
  EXPECT_TRUE(s.at("kernel").at("osrelease").is_string());
  EXPECT_TRUE(s.at("missing").is_array());
  EXPECT_TRUE(diff_snapshots(s, s).empty());
}

}  // namespace
}  // namespace volley::sampling

namespace volley::sampling {
namespace {

TEST(SystemSnapshotTest, SecretSysctlsNeverEnterASnapshot) {
  TempRoot root;
  write_host(root);
  root.write("proc/sys/net/ipv4/tcp_fastopen_key", "00000000-11111111-22222222-33333333\n");
  root.write("proc/sys/net/core/netdev_rss_key", "aa:bb:cc\n");
  root.write("proc/sys/net/core/some_Secret_thing", "x\n");
  const json s = read_system_snapshot(root.path(), CommandRunner{});
  const auto& sysctl = s.at("sysctl");
  EXPECT_TRUE(sysctl.contains("net.core.somaxconn"));
  for (const auto& [name, value] : sysctl.items()) {
    EXPECT_EQ(name.find("key"), std::string::npos) << name;
    EXPECT_EQ(name.find("Secret"), std::string::npos) << name;
  }
  EXPECT_EQ(s.dump().find("33333333"), std::string::npos);
}

TEST(RunCommandTest, AHungHelperIsKilledAfterItsTimeout) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(run_command({"sleep", "30"}).has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

}  // namespace
}  // namespace volley::sampling
