#include "volley/sampling/nic_sampler.hpp"

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

constexpr const char* kNetDev =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "
    "drop fifo colls carrier compressed\n"
    "    lo:    3267      29    0    0    0     0          0         0     3267      29    0    "
    "0    0     0       0          0\n"
    "  eth0:1000000  2000    3    4    0     0          0         5  500000    1000    6    7    "
    "0     0       0          0\n"
    "eth1:42 1 0 0 0 0 0 0 84 2 0 0 0 0 0 0\n"
    "  bad0: 1 2 3\n";

TEST(ParseProcNetDevTest, ReadsEveryInterface) {
  const auto m = parse_proc_net_dev(kNetDev);
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->size(), 3u);  // bad0 is malformed and skipped
  EXPECT_EQ(m->at("eth0"), (NicCounters{1000000, 2000, 3, 4, 500000, 1000, 6, 7}));
  EXPECT_EQ(m->at("lo").rx_bytes, 3267u);
  EXPECT_EQ(m->at("eth1"), (NicCounters{42, 1, 0, 0, 84, 2, 0, 0}));  // no space after ':'
  EXPECT_FALSE(parse_proc_net_dev("Inter-| Receive\n face |bytes\n").has_value());
  EXPECT_FALSE(parse_proc_net_dev("").has_value());
}

NicSample make_sample(std::chrono::steady_clock::time_point t, NicCounterMap m) {
  return NicSample{t, std::move(m)};
}

TEST(NicRatesTest, PerSecondRates) {
  const auto t0 = std::chrono::steady_clock::time_point{} + 5s;
  const auto before = make_sample(
      t0, {{"eth0", {1000, 10, 0, 0, 500, 5, 0, 0}}, {"gone0", {1, 1, 1, 1, 1, 1, 1, 1}}});
  const auto after = make_sample(
      t0 + 2s, {{"eth0", {3000, 30, 2, 4, 4500, 15, 6, 8}}, {"new0", {9, 9, 9, 9, 9, 9, 9, 9}}});
  const auto r = nic_rates(before, after);
  EXPECT_DOUBLE_EQ(r.wall_s, 2.0);
  ASSERT_EQ(r.interfaces.size(), 1u);
  const auto& e = r.interfaces.at("eth0");
  EXPECT_DOUBLE_EQ(e.rx_bytes_per_s, 1000.0);
  EXPECT_DOUBLE_EQ(e.rx_bits_per_s, 8000.0);
  EXPECT_DOUBLE_EQ(e.tx_bytes_per_s, 2000.0);
  EXPECT_DOUBLE_EQ(e.tx_bits_per_s, 16000.0);
  EXPECT_DOUBLE_EQ(e.rx_packets_per_s, 10.0);
  EXPECT_DOUBLE_EQ(e.tx_packets_per_s, 5.0);
  EXPECT_DOUBLE_EQ(e.rx_errors_per_s, 1.0);
  EXPECT_DOUBLE_EQ(e.rx_drops_per_s, 2.0);
  EXPECT_DOUBLE_EQ(e.tx_errors_per_s, 3.0);
  EXPECT_DOUBLE_EQ(e.tx_drops_per_s, 4.0);
}

TEST(NicRatesTest, BackwardsCountersZeroTimeAndMissingSamples) {
  const auto t0 = std::chrono::steady_clock::time_point{} + 5s;
  const auto high = make_sample(t0, {{"eth0", {5000, 50, 5, 5, 5000, 50, 5, 5}}});
  const auto low = make_sample(t0 + 1s, {{"eth0", {100, 1, 0, 0, 100, 1, 0, 0}}});
  const auto r = nic_rates(high, low);
  EXPECT_EQ(r.interfaces.at("eth0").rx_bytes_per_s, 0.0);
  EXPECT_EQ(r.interfaces.at("eth0").tx_packets_per_s, 0.0);
  const auto same_time =
      nic_rates(low, make_sample(t0 + 1s, {{"eth0", {900, 9, 0, 0, 0, 0, 0, 0}}}));
  EXPECT_EQ(same_time.wall_s, 0.0);
  EXPECT_EQ(same_time.interfaces.at("eth0").rx_bytes_per_s, 0.0);
  const auto none = nic_rates(NicSample{}, low);
  EXPECT_TRUE(none.interfaces.empty());
}

TEST(NicRatesTest, JsonKeys) {
  const auto t0 = std::chrono::steady_clock::time_point{};
  const auto r = nic_rates(make_sample(t0, {{"eth0", {}}}),
                           make_sample(t0 + 1s, {{"eth0", {125, 1, 0, 0, 0, 0, 0, 0}}}));
  const nlohmann::json j = r;
  EXPECT_EQ(j.at("wall_s"), 1.0);
  const auto& e = j.at("interfaces").at("eth0");
  EXPECT_EQ(e.at("rx_bytes_per_s"), 125.0);
  EXPECT_EQ(e.at("rx_bits_per_s"), 1000.0);
  for (const char* key :
       {"tx_bytes_per_s", "tx_bits_per_s", "rx_packets_per_s", "tx_packets_per_s",
        "rx_errors_per_s", "tx_errors_per_s", "rx_drops_per_s", "tx_drops_per_s"}) {
    EXPECT_TRUE(e.contains(key)) << key;
  }
  EXPECT_EQ(e.size(), 10u);
}

TEST(NicSamplerTest, FakeRootAndMissingFile) {
  TempRoot root;
  root.write("proc/net/dev", kNetDev);
  ProcNetDevSampler sampler(root.path());
  NicSampler& s = sampler;
  const auto sample = s.sample();
  ASSERT_TRUE(sample.interfaces.has_value());
  EXPECT_EQ(sample.interfaces->size(), 3u);
  TempRoot empty;
  EXPECT_FALSE(sample_nics(empty.path()).interfaces.has_value());
}

TEST(NicSamplerTest, RealHostSmoke) {
  const auto a = sample_nics();
  const auto b = sample_nics();
  const auto r = nic_rates(a, b);
  EXPECT_GE(r.wall_s, 0.0);
  if (a.interfaces) {
    EXPECT_TRUE(a.interfaces->contains("lo"));
  }
}

}  // namespace
}  // namespace volley::sampling
