// The master's connection counts on the wire: end_step's `connected` per port, a master child's
// step_done `connected` per slave and port; read back exactly, and nothing malformed accepted.
#include "volley/control/connected_wire.hpp"

#include <gtest/gtest.h>

#include "volley/control/codec.hpp"
#include "volley/control/message.hpp"

namespace volley::control {
namespace {

using nlohmann::json;

json with_connected(json list) {
  return message("end_step", {{"step", 3}, {"connected", std::move(list)}});
}

TEST(ConnectedWire, PortCountsReadBackExactlyThroughAFrame) {
  const PortCounts counts = {{1, 0}, {40000, 50'000}, {65535, UINT64_MAX}};
  json m = with_connected(port_counts_to_json(counts));
  // Through the codec, as it crosses the wire.
  const std::string frame = encode_frame(m);
  const json back = json::parse(frame.substr(4));
  EXPECT_EQ(port_counts_from(back), counts);
  EXPECT_EQ(port_counts_from(with_connected(json::array())), PortCounts{});
}

TEST(ConnectedWire, MalformedPortCountsAreRefused) {
  EXPECT_FALSE(port_counts_from(message("end_step", {{"step", 0}}))) << "missing";
  const std::vector<json> bad = {
      json(nullptr),
      json::object(),
      json("[[1,2]]"),
      json(7),
      json::array({json(1)}),                                     // an entry that is not a pair
      json::array({json::array({1})}),                            // too short
      json::array({json::array({1, 2, 3})}),                      // too long
      json::array({json::array({-1, 2})}),                        // a negative port
      json::array({json::array({65536, 2})}),                     // beyond 65535
      json::array({json::array({80, -2})}),                       // a negative count
      json::array({json::array({80, 2.5})}),                      // not an integer
      json::array({json::array({"80", 2})}),                      // a string
      json::array({json::array({80, 1}), json::array({80, 2})}),  // a port twice
  };
  for (const auto& list : bad) EXPECT_FALSE(port_counts_from(with_connected(list))) << list;
}

TEST(ConnectedWire, HostPortCountsReadBackAndSplitPerSlave) {
  const HostPortCounts counts = {{{"a", 1000}, 3}, {{"a", 1001}, 4}, {{"b", 1000}, 5}};
  const json m =
      message("step_done", {{"step", 0}, {"connected", host_port_counts_to_json(counts)}});
  EXPECT_EQ(host_port_counts_from(m), counts);
  EXPECT_EQ(counts_for_host(counts, "a"), (PortCounts{{1000, 3}, {1001, 4}}));
  EXPECT_EQ(counts_for_host(counts, "b"), (PortCounts{{1000, 5}}));
  EXPECT_TRUE(counts_for_host(counts, "c").empty());
}

TEST(ConnectedWire, MalformedHostPortCountsAreRefused) {
  EXPECT_FALSE(host_port_counts_from(message("step_done", {{"step", 0}})));
  const std::vector<json> bad = {
      json::object(),
      json::array({json::array({1000, 3})}),        // no host
      json::array({json::array({7, 1000, 3})}),     // the host is not a string
      json::array({json::array({"a", 70000, 3})}),  // a port beyond 65535
      json::array({json::array({"a", 1000, -3})}),  // a negative count
      json::array({json::array({"a", 1, 1}), json::array({"a", 1, 2})}),  // listed twice
  };
  for (const auto& list : bad) {
    EXPECT_FALSE(host_port_counts_from(message("step_done", {{"step", 0}, {"connected", list}})))
        << list;
  }
}

}  // namespace
}  // namespace volley::control
