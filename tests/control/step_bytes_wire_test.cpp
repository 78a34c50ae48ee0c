// The end-of-step byte counts on the wire: `written` lists split to fit the receiver's frame
// limit and read back in order; `drained` shortfalls; nothing a peer sends is trusted.
#include "volley/control/step_bytes_wire.hpp"

#include <gtest/gtest.h>

#include "volley/control/codec.hpp"
#include "volley/engine/plan.hpp"

namespace volley::control {
namespace {

using nlohmann::json;

std::vector<engine::ConnectionBytes> many(std::size_t n) {
  std::vector<engine::ConnectionBytes> out;
  for (std::size_t i = 0; i < n; ++i) {
    // Large values: the worst case for the encoded size.
    out.push_back({static_cast<std::uint32_t>(i % 7), static_cast<std::uint32_t>(999'999 - i),
                   4'000'000'000U, static_cast<std::uint32_t>(i), UINT64_MAX - i,
                   i % 2 == 0 ? 0U : 4'000'000'000U - static_cast<std::uint32_t>(i)});
  }
  return out;
}

TEST(WrittenMessages, SplitToFitTheFrameLimitAndReadBackInOrder) {
  const auto entries = many(3000);
  for (const std::uint64_t limit : {std::uint64_t{4096}, std::uint64_t{65536}, std::uint64_t{0}}) {
    const auto messages = written_messages(7, entries, limit);
    ASSERT_FALSE(messages.empty());
    if (limit == 4096) {
      EXPECT_GT(messages.size(), 1U);
    }
    std::vector<engine::ConnectionBytes> back;
    for (const auto& m : messages) {
      EXPECT_EQ(m.at("type"), "written");
      EXPECT_EQ(m.at("step"), 7);
      EXPECT_LE(encode_frame(m).size() - 4, limit == 0 ? kMaxFrameBytes : limit);
      ASSERT_TRUE(append_written(m, back));
    }
    EXPECT_EQ(back, entries) << "limit " << limit;
  }
  EXPECT_TRUE(written_messages(0, {}, 0).empty());
}

TEST(WrittenMessages, MalformedEntriesAreRefused) {
  std::vector<engine::ConnectionBytes> into;
  EXPECT_FALSE(append_written(json{{"type", "written"}}, into));
  EXPECT_FALSE(append_written(json{{"connections", "no"}}, into));
  EXPECT_FALSE(append_written(json{{"connections", {{1, 2, 3}}}}, into));
  EXPECT_FALSE(append_written(json{{"connections", {{1, 2, 3, -4, 5}}}}, into));
  EXPECT_FALSE(append_written(json{{"connections", {{1, 2, 5'000'000'000ULL, 0, 5}}}}, into));
  EXPECT_FALSE(append_written(json{{"connections", {{1, 2, "3", 0, 5}}}}, into));
  EXPECT_FALSE(append_written(json{{"connections", {{1, 2, 3, 0, 5, -1}}}}, into));
  EXPECT_FALSE(append_written(json{{"connections", {{1, 2, 3, 0, 5, 5'000'000'000ULL}}}}, into));
  EXPECT_TRUE(append_written(json{{"connections", json::array()}}, into));
  EXPECT_TRUE(into.empty() || into.size() <= 1U);
}

// The slave an entry's connection is with travels only when it is not 0 (between a master and
// its child processes); a slave's five-element entries are its master's, peer 0.
TEST(WrittenMessages, ThePeerTravelsWhenItIsNotZero) {
  const std::vector<engine::ConnectionBytes> entries{{1, 2, 3, 4, 5, 0}, {1, 2, 3, 4, 5, 2}};
  const auto messages = written_messages(1, entries, 0);
  ASSERT_EQ(messages.size(), 1U);
  EXPECT_EQ(messages[0].at("connections"), json::parse("[[1,2,3,4,5],[1,2,3,4,5,2]]"));
  std::vector<engine::ConnectionBytes> back;
  ASSERT_TRUE(append_written(messages[0], back));
  EXPECT_EQ(back, entries);
}

TEST(DrainedMessage, ListsAFewShortfallsAndCountsAll) {
  std::vector<engine::DrainShortfall> shortfalls;
  for (std::uint32_t i = 0; i < 8; ++i) shortfalls.push_back({{0, i, 2, 0, 200}, 100, "reset"});
  const json m = drained_message(3, shortfalls);
  EXPECT_EQ(m.at("type"), "drained");
  std::vector<engine::DrainShortfall> back;
  std::uint64_t total = 0;
  ASSERT_TRUE(shortfalls_from(m, back, total));
  EXPECT_EQ(total, 8U);
  ASSERT_EQ(back.size(), 5U);
  EXPECT_EQ(back[1].expected, shortfalls[1].expected);
  EXPECT_EQ(back[1].got, 100U);
  EXPECT_EQ(back[1].why, "reset");
  back.clear();
  ASSERT_TRUE(shortfalls_from(drained_message(3, {}), back, total));
  EXPECT_EQ(total, 0U);
  EXPECT_FALSE(shortfalls_from(json{{"short", {{1, 2}}}}, back, total));
}

TEST(DrainedMessage, SentenceNamesSideStepConnectionAndBytes) {
  engine::Plan plan;
  plan.groups.resize(1);
  plan.groups[0].name = "readers";
  const std::string s = describe_shortfalls("slave 127.0.0.1", 2,
                                            {{{0, 3, 2, 1, 200}, 100, "reset by peer"}}, 1, plan);
  EXPECT_NE(s.find("after step 2, the slave 127.0.0.1 did not read everything"), std::string::npos)
      << s;
  EXPECT_NE(s.find("group 'readers' strand 3 connection 2 (#1): read 100 of the 200 bytes"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("reset by peer"), std::string::npos) << s;
}

}  // namespace
}  // namespace volley::control
