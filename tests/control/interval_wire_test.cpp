// The slaves' UDP counts per interval on the wire: `interval{n}` asked, `interval_counts` answered
// (per transaction, bounded in size), read back exactly; nothing a peer sends is trusted.
#include "volley/control/interval_wire.hpp"

#include <gtest/gtest.h>

#include <cstdint>

#include "volley/control/codec.hpp"

namespace volley::control {
namespace {

using nlohmann::json;

TxnDatagrams worst(std::uint32_t i) {
  // The largest values: the worst case for the encoded size.
  return {UINT32_MAX - i, UINT32_MAX,
          engine::DatagramCounters{UINT64_MAX, UINT64_MAX - 1, UINT64_MAX - 2, UINT64_MAX - 3,
                                   UINT64_MAX - 4, UINT64_MAX - 5, UINT64_MAX - 6}};
}

TEST(IntervalWire, RequestCarriesItsNumber) {
  const json request = interval_request(41);
  EXPECT_EQ(request.at("type"), "interval");
  EXPECT_EQ(interval_requested(request), 41U);
  EXPECT_FALSE(interval_requested(json{{"type", "interval"}}));
  EXPECT_FALSE(interval_requested(json{{"type", "interval"}, {"interval", -1}}));
  EXPECT_FALSE(interval_requested(json{{"type", "interval"}, {"interval", "3"}}));
}

TEST(IntervalWire, CountsReadBackExactly) {
  const std::vector<TxnDatagrams> txns = {
      {0, 1, engine::DatagramCounters{10, 0, 0, 0, 0, 0, 0}},
      {2, 3, engine::DatagramCounters{0, 95, 7, 2, 1, 4, 12345}},
      worst(0),
  };
  const json m = interval_counts_message(9, txns);
  EXPECT_EQ(m.at("type"), "interval_counts");
  // Through the codec, as it travels.
  const std::string frame = encode_frame(m);
  const json back = json::parse(frame.substr(4));
  const auto part = interval_part_from_json(back);
  ASSERT_TRUE(part);
  EXPECT_EQ(part->interval, 9U);
  EXPECT_TRUE(part->missing.empty());
  EXPECT_EQ(part->txns, txns);
}

TEST(IntervalWire, NothingToCountIsAnEmptyListNotMissing) {
  const auto part = interval_part_from_json(interval_counts_message(0, {}));
  ASSERT_TRUE(part);
  EXPECT_TRUE(part->txns.empty());
  EXPECT_TRUE(part->missing.empty());
}

TEST(IntervalWire, TheLargestMessageFitsAFrameAndOneMoreEntrySaysMissing) {
  std::vector<TxnDatagrams> txns;
  for (std::uint32_t i = 0; i < kMaxIntervalEntries; ++i) txns.push_back(worst(i));
  const json full = interval_counts_message(UINT64_MAX, txns);
  EXPECT_LE(encode_frame(full).size() - 4, kMaxFrameBytes / 4);
  const auto part = interval_part_from_json(full);
  ASSERT_TRUE(part);
  EXPECT_EQ(part->txns.size(), kMaxIntervalEntries);

  txns.push_back(worst(1));
  const auto over = interval_part_from_json(interval_counts_message(3, txns));
  ASSERT_TRUE(over);
  EXPECT_EQ(over->interval, 3U);
  EXPECT_TRUE(over->txns.empty());
  EXPECT_NE(over->missing.find(std::to_string(kMaxIntervalEntries)), std::string::npos)
      << over->missing;
}

TEST(IntervalWire, MissingSaysWhy) {
  const auto part = interval_part_from_json(interval_missing_message(5, "the slave runs in 2"));
  ASSERT_TRUE(part);
  EXPECT_EQ(part->interval, 5U);
  EXPECT_EQ(part->missing, "the slave runs in 2");
}

TEST(IntervalWire, MalformedAnswersAreRefused) {
  const json good = interval_counts_message(1, {{0, 0, engine::DatagramCounters{1, 2, 3, 4, 5, 6, 7}}});
  ASSERT_TRUE(interval_part_from_json(good));
  auto with = [&](const char* key, json value) {
    json m = good;
    m[key] = std::move(value);
    return interval_part_from_json(m);
  };
  // As a peer's text parses: non-negative numbers unsigned.
  auto udp = [](const char* text) { return json::parse(text); };
  ASSERT_TRUE(with("udp", udp("[[0, 0, 1, 2, 3, 4, 5, 6, 7]]")));
  EXPECT_FALSE(with("interval", -1));
  EXPECT_FALSE(with("interval", "1"));
  EXPECT_FALSE(with("udp", "no"));
  EXPECT_FALSE(with("udp", udp("[[0, 0, 1, 2, 3]]")));
  EXPECT_FALSE(with("udp", udp("[[0, 0, 1, 2, 3, 4, 5, 6, 7, 8]]")));
  EXPECT_FALSE(with("udp", udp("[[0, 0, 1, 2, 3, 4, 5, 6, -7]]")));
  EXPECT_FALSE(with("udp", udp("[[-1, 0, 1, 2, 3, 4, 5, 6, 7]]")));
  EXPECT_FALSE(with("udp", udp("[[8589934592, 0, 1, 2, 3, 4, 5, 6, 7]]")));
  EXPECT_FALSE(with("udp", udp("[[0, 0, 1.5, 2, 3, 4, 5, 6, 7]]")));
  EXPECT_FALSE(with("udp", udp("[[0, 0, 1, 2, 3, 4, 5, 6, 18446744073709551616]]")));
  EXPECT_FALSE(with("udp", udp(R"([{"group": 0}])")));
  json no_list = good;
  no_list.erase("udp");
  EXPECT_FALSE(interval_part_from_json(no_list));
  json too_many = good;
  too_many["udp"] = json::array();
  for (std::size_t i = 0; i <= kMaxIntervalEntries; ++i) {
    too_many["udp"].push_back(udp("[0, 0, 1, 2, 3, 4, 5, 6, 7]"));
  }
  EXPECT_FALSE(interval_part_from_json(too_many));
}

}  // namespace
}  // namespace volley::control
