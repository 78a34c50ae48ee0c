// ThrottledLog: what a flood of peer-caused events costs the log, and that no event goes uncounted.
#include "volley/core/throttled_log.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace volley::core {
namespace {

using namespace std::chrono_literals;
using Clock = ThrottledLog::Clock;

TEST(ThrottledLog, AFloodCostsOneLineASecondAndEveryEventIsCounted) {
  std::vector<std::string> lines;
  ThrottledLog log([&](const std::string& l) { lines.push_back(l); }, 1s, "connections closed");
  const Clock::time_point t0{};
  log.flush();  // nothing left out: no line
  EXPECT_TRUE(lines.empty());

  for (int i = 0; i < 10000; ++i) log.add("closed " + std::to_string(i), t0 + i * 50us);
  ASSERT_EQ(lines.size(), 1U);  // 10,000 events within half a second
  EXPECT_EQ(lines[0], "closed 0");

  log.add("closed late", t0 + 1s);
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[1], "closed late (and 9999 more connections closed since the last such line)");

  log.add("a", t0 + 1500ms);
  log.add("b", t0 + 1600ms);
  log.flush();
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[2], "2 more connections closed since the last such line; the last: b");
  log.flush();  // counted once only
  EXPECT_EQ(lines.size(), 3U);

  log.add("c", t0 + 2600ms);  // a second after the last line that went out
  ASSERT_EQ(lines.size(), 4U);
  EXPECT_EQ(lines[3], "c");
}

TEST(ThrottledLog, ThreadsAddingAtOnceLoseNoCount) {
  std::vector<std::string> lines;
  ThrottledLog log([&](const std::string& l) { lines.push_back(l); }, 1h, "events");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&log] {
      for (int i = 0; i < 1000; ++i) log.add("e");
    });
  }
  for (auto& t : threads) t.join();
  log.flush();
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[0], "e");
  EXPECT_EQ(lines[1], "3999 more events since the last such line; the last: e");
}

}  // namespace
}  // namespace volley::core

namespace volley::core {
namespace {

using namespace std::chrono_literals;
using Clock = ThrottledLog::Clock;

// A timer's flush_due() says what was left out once a second has passed since the last line,
// not before, and counts as that second's line; total() counts every event.
TEST(ThrottledLog, FlushDueWaitsForTheIntervalAndCountsAsItsLine) {
  std::vector<std::string> lines;
  ThrottledLog log([&](const std::string& l) { lines.push_back(l); }, 1s, "refusals");
  const Clock::time_point t0{};
  EXPECT_EQ(log.flush_due(t0), std::nullopt);  // nothing left out
  EXPECT_FALSE(log.add("r0", t0));
  EXPECT_TRUE(log.add("r1", t0 + 100ms));
  EXPECT_TRUE(log.add("r2", t0 + 200ms));
  EXPECT_EQ(log.flush_due(t0 + 900ms), t0 + 1s);  // too early: when it will be time
  EXPECT_EQ(lines.size(), 1U);
  EXPECT_EQ(log.flush_due(t0 + 1s), std::nullopt);
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[1], "2 more refusals since the last such line; the last: r2");
  EXPECT_TRUE(log.add("r3", t0 + 1500ms)) << "the summary was this second's line";
  EXPECT_FALSE(log.add("r4", t0 + 2s));
  EXPECT_EQ(lines.back(), "r4 (and 1 more refusals since the last such line)");
  EXPECT_EQ(log.total(), 5U);
  // One left out: its line as it was, only later.
  EXPECT_TRUE(log.add("r5", t0 + 2100ms));
  EXPECT_EQ(log.flush_due(t0 + 3s), std::nullopt);
  EXPECT_EQ(lines.back(), "r5");
}

}  // namespace
}  // namespace volley::core
