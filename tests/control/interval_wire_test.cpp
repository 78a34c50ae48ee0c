// The slaves' part of each interval on the wire: `interval{n}` asked, `interval_counts` answered
// (UDP counts and TCP state per transaction, bounded in size), read back exactly; nothing a peer
// sends is trusted.
#include "volley/control/interval_wire.hpp"

#include <gtest/gtest.h>

#include <cstdint>

#include <fmt/format.h>

#include "volley/control/codec.hpp"

namespace volley::control {
namespace {

using nlohmann::json;

TxnDatagrams worst(std::uint32_t i) {
  // The largest values: the worst case for the encoded size.
  return {UINT32_MAX - i, UINT32_MAX,
          results::DatagramCounters{UINT64_MAX, UINT64_MAX - 1, UINT64_MAX - 2, UINT64_MAX - 3,
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
      {0, 1, results::DatagramCounters{10, 0, 0, 0, 0, 0, 0}},
      {2, 3, results::DatagramCounters{0, 95, 7, 2, 1, 4, 12345}},
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

stats::TcpSummary tcp_of(std::uint64_t rtt_us, std::size_t connections) {
  stats::TcpSummary s;
  for (std::size_t i = 0; i < connections; ++i) {
    stats::TcpReading r;
    r.rtt_us = rtt_us + i;
    r.cwnd = 10;
    r.busy_us = 1000;
    r.rwnd_limited_us = 250;
    r.retransmits = i;
    s.add(r);
  }
  return s;
}

TEST(IntervalWire, TcpStateReadsBackExactlyBesideTheCounts) {
  const std::vector<TxnDatagrams> udp = {{0, 2, results::DatagramCounters{1, 2, 3, 4, 5, 6, 7}}};
  const std::vector<TxnTcp> tcp = {{0, 1, tcp_of(40, 3)}, {1, 4, tcp_of(900, 1)}};
  const json m = interval_counts_message(6, udp, tcp);
  const auto part = interval_part_from_json(json::parse(encode_frame(m).substr(4)));
  ASSERT_TRUE(part);
  EXPECT_EQ(part->txns, udp);
  ASSERT_EQ(part->tcp.size(), 2U);
  EXPECT_EQ(part->tcp[0].group, 0U);
  EXPECT_EQ(part->tcp[0].txn, 1U);
  EXPECT_EQ(part->tcp[0].tcp, tcp[0].tcp);
  EXPECT_EQ(part->tcp[1].txn, 4U);
  EXPECT_EQ(part->tcp[1].tcp, tcp[1].tcp);
  // Without TCP connections the message has no `tcp` at all.
  EXPECT_FALSE(interval_counts_message(6, udp).contains("tcp"));
}

TEST(IntervalWire, TheHostsKernelCountersReadBackExactly) {
  const sampling::ProtocolCounterMap moved{{"Tcp.OutSegs", 29229},
                                           {"softnet.processed", UINT64_MAX}};
  const auto part = interval_part_from_json(
      json::parse(encode_frame(interval_counts_message(2, {}, {}, moved)).substr(4)));
  ASSERT_TRUE(part);
  ASSERT_TRUE(part->kernel);
  EXPECT_EQ(*part->kernel, moved);
  // A slave that does not read them sends no `kernel`; one where nothing moved, an empty one.
  EXPECT_FALSE(interval_part_from_json(interval_counts_message(2, {}))->kernel);
  const auto nothing =
      interval_part_from_json(interval_counts_message(2, {}, {}, sampling::ProtocolCounterMap{}));
  ASSERT_TRUE(nothing && nothing->kernel);
  EXPECT_TRUE(nothing->kernel->empty());
}

TEST(IntervalWire, TcpStateIsMergedPerTransactionAcrossItsSlots) {
  engine::Plan plan;
  plan.slots.resize(4);
  plan.slots[0] = engine::SlotInfo{};  // group 0, txn 0
  plan.slots[1].txn = 1;
  plan.slots[2].txn = 1;
  plan.slots[2].flowop = 0;  // a flowop slot: its TCP state is not a transaction's
  plan.slots[3].group = 1;
  std::vector<results::SlotStats> slots(4);
  slots[1].tcp = tcp_of(50, 2);
  slots[2].tcp = tcp_of(70, 5);
  slots[3].tcp = tcp_of(60, 1);
  const auto tcp = txn_tcp(plan, slots);
  ASSERT_EQ(tcp.size(), 2U);  // group 0 txn 0 had none open
  EXPECT_EQ(tcp[0].group, 0U);
  EXPECT_EQ(tcp[0].txn, 1U);
  EXPECT_EQ(tcp[0].tcp, slots[1].tcp);
  EXPECT_EQ(tcp[1].group, 1U);
  EXPECT_EQ(tcp[1].tcp, slots[3].tcp);
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
  const json good =
      interval_counts_message(1, {{0, 0, results::DatagramCounters{1, 2, 3, 4, 5, 6, 7}}});
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
  // The TCP part: [group, txn, summary], the summary as the results carry it.
  const json summary = tcp_of(40, 2);
  ASSERT_TRUE(with("tcp", json::array({json::array({0U, 1U, summary})})));
  EXPECT_FALSE(with("tcp", "no"));
  EXPECT_FALSE(with("tcp", json::array({json::array({0U, 1U})})));
  EXPECT_FALSE(with("tcp", json::array({json::array({-1, 1U, summary})})));
  EXPECT_FALSE(with("tcp", json::array({json::array({0U, 1U, "summary"})})));
  // The kernel part: {name: unsigned}, bounded in entries and name length.
  ASSERT_TRUE(with("kernel", json::parse(R"({"Tcp.OutSegs": 5})")));
  EXPECT_FALSE(with("kernel", json::array()));
  EXPECT_FALSE(with("kernel", json::parse(R"({"Tcp.OutSegs": -5})")));
  EXPECT_FALSE(with("kernel", json::parse(R"({"Tcp.OutSegs": "5"})")));
  EXPECT_FALSE(with("kernel", json::parse(R"({"": 5})")));
  EXPECT_FALSE(with("kernel", json{{std::string(kMaxCounterNameBytes + 1, 'x'), 5U}}));
  json many = json::object();
  for (std::size_t i = 0; i <= kMaxIntervalCounters; ++i) many[fmt::format("c{}", i)] = 1U;
  EXPECT_FALSE(with("kernel", many));
  json bad_summary = summary;
  bad_summary["rtt_us"] = "fast";
  EXPECT_FALSE(with("tcp", json::array({json::array({0U, 1U, bad_summary})})));
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
