// The receiving side's UDP counts per interval, end to end: the real CLI with a real `--local`
// slave, a UDP stream each way for ~2 s with `-i 0.5`. What arrived at the slave (m->s) and at
// the master (s->m) is in every interval of the JSON, the CSV and the live line, beside what the
// other side sent, and the intervals add up to each side's totals.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/local_run.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// Group 0: the master writes (m->s); group 1: the slave writes (s->m).
constexpr const char* kBothWays = R"XML(<?xml version="1.0"?>
<profile name="udp both ways">
  <group nthreads="1">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=udp"/></transaction>
    <transaction duration="2s" rate="2000"><flowop type="write" options="size=200"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
  <group nthreads="1">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=udp"/></transaction>
    <transaction duration="2s"><flowop type="read" options="size=200 timeout=200ms"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML";

/// The datagram counters of flowop 0 of transaction 1 of group `group`, in a side's `groups`.
const json& stream_datagrams(const json& groups, std::size_t group) {
  return groups.at(group).at("transactions").at(1).at("flowops").at(0).at("datagrams");
}

struct WaySums {
  std::uint64_t intervals = 0;
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::int64_t lost = 0;
  std::uint64_t late = 0;
  std::uint64_t duplicates = 0;
};

/// Per way ("m->s", "s->m"), the intervals' `udp` entries added up; fails on a missing side.
std::map<std::string, WaySums> sum_ways(const json& doc) {
  std::map<std::string, WaySums> sums;
  for (const json& interval : doc.at("intervals")) {
    if (!interval.contains("slave_counts")) {
      ADD_FAILURE() << "an interval without slave_counts: " << interval.dump();
      continue;
    }
    EXPECT_TRUE(interval.at("slave_counts").at("missing").is_null()) << interval.dump();
    EXPECT_EQ(interval.at("slave_counts").at("asked"), 1);
    EXPECT_EQ(interval.at("slave_counts").at("answered"), 1);
    for (const json& txn : interval.at("transactions")) {
      if (!txn.contains("udp")) continue;
      for (const json& way : txn.at("udp")) {
        EXPECT_FALSE(way.contains("receiver_missing")) << way.dump();
        if (way.contains("receiver_missing")) continue;
        WaySums& s = sums[way.at("way").get<std::string>()];
        ++s.intervals;
        s.sent += way.at("sent").get<std::uint64_t>();
        s.received += way.at("received").get<std::uint64_t>();
        s.lost += way.at("lost").get<std::int64_t>();
        s.late += way.at("late").get<std::uint64_t>();
        s.duplicates += way.at("duplicates").get<std::uint64_t>();
      }
    }
  }
  return sums;
}

/// The CSV's column `name` added up over its rows.
double csv_sum(const std::string& csv, const std::string& name) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  std::istringstream h(line);
  for (std::string field; std::getline(h, field, ',');) header.push_back(field);
  const auto column =
      static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  EXPECT_LT(column, header.size()) << name;
  double sum = 0;
  while (std::getline(in, line)) {
    std::istringstream row(line);  // the names here have no comma: no quoting
    std::string field;
    for (std::size_t i = 0; i <= column && std::getline(row, field, ','); ++i) {
    }
    if (!field.empty()) sum += std::stod(field);
  }
  return sum;
}

TEST(UdpIntervals, ReceiversCountsPerIntervalAddUpToTheirTotalsBothWays) {
  TempDir dir;
  const auto profile = dir.write("udp.xml", kBothWays);
  const auto out = dir.path() / "r.json";
  const auto csv = dir.path() / "r.csv";
  const auto r = run_volley({"run", profile.string(), "--local", "--set", "h=127.0.0.1", "-i",
                             "0.5", "--json", out.string(), "--csv", csv.string()},
                            60s);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const json doc = read_json(out);
  ASSERT_FALSE(doc.is_discarded());
  ASSERT_EQ(doc.at("slaves").size(), 1U);
  const json& master = doc.at("groups");
  const json& slave = doc.at("slaves").at(0).at("groups");

  const auto sums = sum_ways(doc);
  ASSERT_TRUE(sums.contains("m->s")) << doc.at("intervals").dump();
  ASSERT_TRUE(sums.contains("s->m")) << doc.at("intervals").dump();
  // Several intervals of the 2 s stream, each with the receiver's counts.
  EXPECT_GE(sums.at("m->s").intervals, 3U);

  // m->s: the master sent, the slave received.
  const json& m_sent = stream_datagrams(master, 0);
  const json& s_got = stream_datagrams(slave, 0);
  ASSERT_GT(m_sent.at("sent").get<std::uint64_t>(), 1000U);
  const WaySums& down = sums.at("m->s");
  EXPECT_EQ(down.sent, m_sent.at("sent").get<std::uint64_t>());
  EXPECT_EQ(down.received, s_got.at("received").get<std::uint64_t>());
  EXPECT_EQ(down.lost, s_got.at("lost").get<std::int64_t>());
  EXPECT_EQ(down.late, s_got.at("late").get<std::uint64_t>());
  EXPECT_EQ(down.duplicates, s_got.at("duplicates").get<std::uint64_t>());
  EXPECT_GT(down.received, 0U);

  // s->m: the slave sent, the master received.
  const json& s_sent = stream_datagrams(slave, 1);
  const json& m_got = stream_datagrams(master, 1);
  ASSERT_GT(s_sent.at("sent").get<std::uint64_t>(), 0U);
  const WaySums& up = sums.at("s->m");
  EXPECT_EQ(up.sent, s_sent.at("sent").get<std::uint64_t>());
  EXPECT_EQ(up.received, m_got.at("received").get<std::uint64_t>());
  EXPECT_EQ(up.lost, m_got.at("lost").get<std::int64_t>());

  // The CSV: the slaves' columns add up the same way.
  std::ifstream csv_in(csv);
  std::stringstream csv_text;
  csv_text << csv_in.rdbuf();
  EXPECT_EQ(csv_sum(csv_text.str(), "slave_udp_received"),
            static_cast<double>(s_got.at("received").get<std::uint64_t>()));
  EXPECT_EQ(csv_sum(csv_text.str(), "slave_udp_sent"),
            static_cast<double>(s_sent.at("sent").get<std::uint64_t>()));
  EXPECT_EQ(csv_sum(csv_text.str(), "udp_sent"),
            static_cast<double>(m_sent.at("sent").get<std::uint64_t>()));

  // The live line shows both directions with the receiver's side, and the final report the
  // spread over the intervals.
  EXPECT_NE(r.out.find("udp m->s sent"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("udp s->m sent"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("slave counts missing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("per interval (the receiver's loss"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace volley::test
