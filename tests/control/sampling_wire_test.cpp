// The kernel counters a slave sends: read back exactly, and refused cleanly when malformed.
#include "volley/control/sampling_wire.hpp"

#include <gtest/gtest.h>

namespace volley::control {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

sampling::KernelCounterDeltas sample_deltas() {
  sampling::KernelSample before;
  sampling::KernelSample after;
  after.taken = before.taken + 3s;
  for (const auto name : sampling::watched_protocol_counters()) {
    before.protocol.emplace(std::string(name), 7);
    after.protocol.emplace(std::string(name), 9);
  }
  after.protocol.erase("Udp.NoPorts");
  before.protocol["Tcp.RetransSegs"] = 100;  // went backwards
  before.softnet = std::vector<sampling::SoftnetCpu>{{0, 1, 2, 3}, {4, 1, 1, 1}};
  after.softnet = std::vector<sampling::SoftnetCpu>{{0, 11, 2, 4}, {4, 1, 1, 1}};
  after.problems = {"proc/net/snmp: line 9: 'x' is not an integer"};
  return sampling::kernel_counter_deltas(before, after);
}

json wire(const sampling::KernelCounterDeltas& d) {
  json j;
  sampling::to_json(j, d);
  return json::parse(j.dump());
}

TEST(KernelCountersWire, RoundTrip) {
  const auto d = sample_deltas();
  const auto back = kernel_counters_from_json(wire(d));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, d);
  EXPECT_EQ(back->absent, (std::vector<std::string>{"Udp.NoPorts"}));
  EXPECT_EQ(back->went_backwards, (std::vector<std::string>{"Tcp.RetransSegs"}));
}

TEST(KernelCountersWire, NoSoftnetIsNull) {
  auto d = sample_deltas();
  d.softnet.reset();
  const auto back = kernel_counters_from_json(wire(d));
  ASSERT_TRUE(back.has_value());
  EXPECT_FALSE(back->softnet.has_value());
}

TEST(KernelCountersWire, UnknownNamesAreLeftOut) {
  json j = wire(sample_deltas());
  j["counters"]["TcpExt.SomethingNew"] = 5U;
  j["counters"]["\x1b[2J"] = 5U;
  j["absent"].push_back("Udp.Future");
  const auto back = kernel_counters_from_json(j);
  ASSERT_TRUE(back.has_value());
  EXPECT_FALSE(back->counters.contains("TcpExt.SomethingNew"));
  EXPECT_EQ(back->counters.size(), sampling::watched_protocol_counters().size() - 2);
  EXPECT_EQ(back->absent, (std::vector<std::string>{"Udp.NoPorts"}));
}

TEST(KernelCountersWire, MalformedIsMissing) {
  const json good = wire(sample_deltas());
  EXPECT_FALSE(kernel_counters_from_json(json(nullptr)).has_value());
  EXPECT_FALSE(kernel_counters_from_json(json("kernel")).has_value());
  EXPECT_FALSE(kernel_counters_from_json(json::object()).has_value());
  const auto broken = [&good](auto change) {
    json j = good;
    change(j);
    return kernel_counters_from_json(j).has_value();
  };
  EXPECT_TRUE(broken([](json&) {}));
  EXPECT_FALSE(broken([](json& j) { j["counters"]["Udp.InErrors"] = -1; }));
  EXPECT_FALSE(broken([](json& j) { j["counters"]["Udp.InErrors"] = 1.5; }));
  EXPECT_FALSE(broken([](json& j) { j["counters"]["Udp.InErrors"] = "1"; }));
  EXPECT_FALSE(broken([](json& j) { j["counters"]["Unknown"] = "1"; }));  // still a count
  EXPECT_FALSE(broken([](json& j) { j["counters"] = json::array({1, 2}); }));
  EXPECT_FALSE(broken([](json& j) { j["wall_s"] = "3"; }));
  EXPECT_FALSE(broken([](json& j) { j.erase("went_backwards"); }));
  EXPECT_FALSE(broken([](json& j) { j["absent"] = json{{"a", "Udp.NoPorts"}}; }));
  EXPECT_FALSE(broken([](json& j) { j["absent"] = json::array({7}); }));
  EXPECT_FALSE(broken([](json& j) {
    j["absent"] = json(
        std::vector<std::string>(sampling::watched_protocol_counters().size() + 1, "Udp.NoPorts"));
  }));
  EXPECT_FALSE(broken([](json& j) { j["softnet"] = 3; }));
  EXPECT_FALSE(broken([](json& j) { j["softnet"]["per_cpu"][0]["cpu"] = 4294967296ULL; }));
  EXPECT_FALSE(broken([](json& j) { j["softnet"]["per_cpu"][0].erase("dropped"); }));
  EXPECT_FALSE(broken([](json& j) { j["softnet"]["per_cpu"] = json::object(); }));
  EXPECT_FALSE(broken([](json& j) {
    j["softnet"]["per_cpu"] = json::array();
    for (std::size_t i = 0; i <= kMaxKernelCpus; ++i) {
      j["softnet"]["per_cpu"].push_back(
          {{"cpu", i}, {"processed", 0}, {"dropped", 0}, {"time_squeeze", 0}});
    }
  }));
  EXPECT_FALSE(broken([](json& j) {
    j["problems"] = json(std::vector<std::string>(kMaxKernelProblems + 1, "p"));
  }));
  EXPECT_FALSE(broken([](json& j) { j["problems"] = json::array({1}); }));
}

TEST(KernelCountersWire, LongProblemsAreCut) {
  json j = wire(sample_deltas());
  j["problems"] = json::array({std::string(100000, 'x')});
  const auto back = kernel_counters_from_json(j);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->problems.front().size(), 512u);
}

}  // namespace
}  // namespace volley::control
