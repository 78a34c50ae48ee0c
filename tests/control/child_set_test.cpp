// The wire pieces of a run spread over processes: one list of ports a peer spreads its strands
// over, and a master's child's targets.
#include "volley/control/child_set.hpp"

#include <gtest/gtest.h>

namespace volley::control {
namespace {

TEST(SpreadPorts, EntryJBelongsToProcessJModuloProcesses) {
  // Three processes with two listeners each, and one with three (only two are used).
  const std::vector<std::vector<std::uint16_t>> per_process = {{10, 11}, {20, 21, 22}, {30, 31}};
  const auto spread = spread_ports(per_process);
  ASSERT_EQ(spread, (std::vector<std::uint16_t>{10, 20, 30, 11, 21, 31}));
  // Strand s connects to entry s % size: always a port of process s % 3, the one that runs it.
  for (std::uint64_t s = 0; s < 100; ++s) {
    const auto port = spread[s % spread.size()];
    EXPECT_EQ(port / 10 - 1, s % 3) << s;
  }
  EXPECT_TRUE(spread_ports({}).empty());
  EXPECT_TRUE(spread_ports({{1, 2}, {}}).empty());
}

TEST(SpreadPorts, PortsOnTheWire) {
  EXPECT_EQ(shard_ports_from_json(nlohmann::json::array({1, 2, 65535})),
            (std::vector<std::uint16_t>{1, 2, 65535}));
  EXPECT_TRUE(shard_ports_from_json(nlohmann::json::array({1, 70000})).empty());
  EXPECT_TRUE(shard_ports_from_json(nlohmann::json::array({1, "x"})).empty());
  EXPECT_TRUE(shard_ports_from_json(nlohmann::json()).empty());
}

TEST(ChildTargets, RoundTrip) {
  std::map<std::string, engine::HostTarget> targets;
  targets["slave1"] =
      engine::HostTarget{boost::asio::ip::make_address("127.0.0.2"), 4000, {4000, 4001}};
  targets["v6"] = engine::HostTarget{boost::asio::ip::make_address("::1"), 5000};
  const auto back = targets_from_json(targets_to_json(targets));
  ASSERT_EQ(back.size(), 2U);
  EXPECT_EQ(back.at("slave1").address.to_string(), "127.0.0.2");
  EXPECT_EQ(back.at("slave1").shard_ports, (std::vector<std::uint16_t>{4000, 4001}));
  EXPECT_EQ(back.at("slave1").port_for(3), 4001);
  EXPECT_EQ(back.at("v6").port_for(3), 5000);
}

// A parent's or a child's message is a peer's bytes: what is malformed is left out, never thrown
// on (value() throws on a non-object, which ended the session).
TEST(ChildTargets, MalformedTargetsAreLeftOut) {
  const auto targets = targets_from_json(nlohmann::json::parse(
      R"({"ok": {"address": "127.0.0.1", "port": 1}, "str": "x", "num": 5,
          "badaddr": {"address": 7, "port": 1}, "badport": {"address": "::1", "port": "1"},
          "negport": {"address": "::1", "port": -1}, "noport": {"address": "::1"},
          "badports": {"address": "::1", "port": 2, "ports": {"0": 1}}})"));
  EXPECT_EQ(targets.size(), 3U);
  EXPECT_EQ(targets.at("ok").port_for(0), 1);
  EXPECT_EQ(targets.at("noport").port_for(0), 0);
  EXPECT_TRUE(targets.at("badports").shard_ports.empty());
  EXPECT_TRUE(targets_from_json(nlohmann::json::array({1})).empty());
}

TEST(LoadedListeners, ReadFromShardPortsZeroOnly) {
  using nlohmann::json;
  EXPECT_EQ(loaded_listeners(json::parse(R"({"shard_ports": {"0": [5, 6]}})")),
            (std::vector<std::uint16_t>{5, 6}));
  EXPECT_TRUE(loaded_listeners(json::parse(R"({"shard_ports": [5, 6]})")).empty());
  EXPECT_TRUE(loaded_listeners(json::parse(R"({"shard_ports": {"1": [5]}})")).empty());
  EXPECT_TRUE(loaded_listeners(json::parse(R"({"shard_ports": 3})")).empty());
  EXPECT_TRUE(loaded_listeners(json::array()).empty());
}

TEST(MergeDrained, CountsWhatIsANumberAndListsWhatIsAList) {
  using nlohmann::json;
  const json merged =
      merge_drained(2, {json::parse(R"({"short": [[0,0,1,0,9,1,"a"]], "short_total": 3})"),
                        json::parse(R"({"short": {"x": 1}, "short_total": "7"})"), json::array({1}),
                        json::parse(R"({"short_total": 18446744073709551615})")});
  EXPECT_EQ(merged.at("short").size(), 1U);
  EXPECT_EQ(merged.at("short_total").get<std::uint64_t>(), UINT64_MAX);  // saturated, not wrapped
}

}  // namespace
}  // namespace volley::control
