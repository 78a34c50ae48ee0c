// TcpSummary: gauges kept as sketches (unset ones left out), counts summed; merge; wire form.
#include "volley/stats/tcp_summary.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace volley::stats {
namespace {

TcpReading reading(std::uint64_t rtt, std::uint64_t busy, std::uint64_t rwnd) {
  TcpReading r;
  r.rtt_us = rtt;
  r.cwnd = 10;
  r.busy_us = busy;
  r.rwnd_limited_us = rwnd;
  r.retransmits = 1;
  r.segs_out = 100;
  return r;
}

TEST(TcpSummary, GaugesAreSketchedAndCountsSummed) {
  TcpSummary s;
  EXPECT_TRUE(s.empty());
  s.add(reading(50, 1000, 600));
  TcpReading paced = reading(70, 3000, 0);
  paced.ssthresh = 20;
  paced.pacing_rate = 1'000'000;
  s.add(paced);
  EXPECT_EQ(s.connections(), 2U);
  EXPECT_EQ(s.rtt_us.min(), 50U);
  EXPECT_EQ(s.rtt_us.max(), 70U);
  // Unset on the first connection: only the second one's.
  EXPECT_EQ(s.ssthresh.count(), 1U);
  EXPECT_EQ(s.pacing_rate.count(), 1U);
  EXPECT_EQ(s.busy_us, 4000U);
  EXPECT_EQ(s.rwnd_limited_us, 600U);
  EXPECT_EQ(s.retransmits, 2U);
  EXPECT_EQ(s.segs_out, 200U);
}

TEST(TcpSummary, MergeAndTheWireForm) {
  TcpSummary a;
  TcpSummary b;
  TcpSummary all;
  for (std::uint64_t i = 1; i <= 20; ++i) {
    (i % 2 == 0 ? a : b).add(reading(i * 10, i, i / 2));
    all.add(reading(i * 10, i, i / 2));
  }
  a.merge(b);
  EXPECT_EQ(a, all);
  const nlohmann::json j = all;
  TcpSummary back;
  ASSERT_TRUE(tcp_summary_from_json(j, back));
  EXPECT_EQ(back, all);
  nlohmann::json bad = j;
  bad["busy_us"] = -1;
  EXPECT_FALSE(tcp_summary_from_json(bad, back));
  bad = j;
  bad.erase("rtt_us");
  EXPECT_FALSE(tcp_summary_from_json(bad, back));
  EXPECT_FALSE(tcp_summary_from_json(nlohmann::json("tcp"), back));
}

TEST(TcpSummary, GaugesNoConnectionHadAreLeftOutAndReadBackEmpty) {
  TcpSummary s;
  s.add(reading(50, 1000, 600));  // neither ssthresh nor a pacing rate
  const nlohmann::json j = s;
  EXPECT_FALSE(j.contains("ssthresh"));
  EXPECT_FALSE(j.contains("pacing_rate"));
  EXPECT_TRUE(j.contains("cwnd"));
  TcpSummary back;
  ASSERT_TRUE(tcp_summary_from_json(j, back));
  EXPECT_EQ(back, s);
  EXPECT_TRUE(back.ssthresh.empty());

  const nlohmann::json none = TcpSummary{};
  EXPECT_TRUE(none.contains("rtt_us"));
  ASSERT_TRUE(tcp_summary_from_json(none, back));
  EXPECT_TRUE(back.empty());

  nlohmann::json bad = j;
  bad["ssthresh"] = nlohmann::json{{"n", 1}};
  EXPECT_FALSE(tcp_summary_from_json(bad, back));
}

}  // namespace
}  // namespace volley::stats
