// The search's logic without runs: targets and ranges parsed or refused with a sentence, and the
// bisection against a load whose capacity is known finding it within the precision, in a
// bounded number of loads.
#include "volley/analysis/capacity_search.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

namespace volley::analysis {
namespace {

TEST(SearchTarget, PercentileAndBound) {
  const auto t = parse_target("p99<=500us");
  ASSERT_TRUE(t.target) << t.error;
  EXPECT_EQ(t.target->percentile, Metric::kP99Ns);
  EXPECT_DOUBLE_EQ(t.target->max_ns, 500'000.0);
  EXPECT_EQ(parse_target(" p99.9 <= 2ms").target->percentile, Metric::kP99_9Ns);
  EXPECT_EQ(parse_target("p50<=1s").target->percentile, Metric::kP50Ns);
  for (const char* bad : {"p99", "p98<=1ms", "p99<=", "p99<=fast", "p99<=0s", "<=1ms"}) {
    const auto r = parse_target(bad);
    EXPECT_FALSE(r.target) << bad;
    EXPECT_NE(r.error.find("--target"), std::string::npos) << bad << ": " << r.error;
  }
}

TEST(SearchRange, BoundsAndKind) {
  const auto r = parse_search_range("r=100..100000");
  ASSERT_TRUE(r.range) << r.error;
  EXPECT_EQ(r.range->name, "r");
  EXPECT_TRUE(r.range->integer);
  EXPECT_FALSE(parse_search_range("r=0.5..10").range->integer);
  for (const char* bad :
       {"r", "r=1,2", "=1..2", "r=5..5", "r=10..1", "r=0..10", "r=a..10", "r=1..", "r=..4"}) {
    const auto p = parse_search_range(bad);
    EXPECT_FALSE(p.range) << bad;
    EXPECT_NE(p.error.find("--vary"), std::string::npos) << bad;
  }
}

/// Runs the search against loads that meet the target up to `capacity`; returns the loads tried.
std::vector<double> search_to(CapacitySearch& search, double capacity) {
  std::vector<double> tried;
  while (const auto load = search.next()) {
    tried.push_back(*load);
    search.record(*load, *load <= capacity);
    if (tried.size() > 100) break;
  }
  return tried;
}

TEST(CapacitySearch, FindsAKnownCapacityWithinThePrecisionInFewLoads) {
  for (const double capacity : {137.0, 1234.5, 9000.0, 99'999.0}) {
    CapacitySearch search(SearchRange{"r", 100, 100'000, false}, 0.02);
    const auto tried = search_to(search, capacity);
    ASSERT_TRUE(search.capacity()) << capacity;
    ASSERT_TRUE(search.missed()) << capacity;
    EXPECT_LE(*search.capacity(), capacity);
    EXPECT_GT(*search.missed(), capacity);
    EXPECT_LE(*search.missed() - *search.capacity(), 0.02 * *search.capacity() + 1e-9);
    // log2(ln(1000) / 0.02) is about 8.4: at most 9 middles and the two ends.
    EXPECT_LE(tried.size(), 11U) << capacity;
    EXPECT_EQ(tried[0], 100.0);
    EXPECT_EQ(tried[1], 100'000.0);
  }
}

TEST(CapacitySearch, IntegersEndOnAdjacentValues) {
  CapacitySearch search(SearchRange{"t", 1, 1000, true}, 0.02);
  search_to(search, 371);
  EXPECT_EQ(search.capacity(), 371.0);
  EXPECT_EQ(search.missed(), 372.0);
  EXPECT_EQ(search.text(371), "371");
}

TEST(CapacitySearch, TheEndsOfTheRangeAnswerAtOnce) {
  CapacitySearch none(SearchRange{"r", 10, 20, true}, 0.02);
  EXPECT_EQ(search_to(none, 5).size(), 1U);  // the low end missed: nothing higher is tried
  EXPECT_FALSE(none.capacity());
  CapacitySearch all(SearchRange{"r", 10, 20, true}, 0.02);
  EXPECT_EQ(search_to(all, 50).size(), 2U);  // the high end met
  EXPECT_EQ(all.capacity(), 20.0);
  EXPECT_FALSE(all.missed());
}

nlohmann::json search_doc(double capacity, std::optional<double> missed,
                          const std::string& variable = "r") {
  nlohmann::json s{{"variable", variable}, {"target", "p99<=1ms"}, {"capacity", capacity}};
  s["lowest_missed"] = missed ? nlohmann::json(*missed) : nlohmann::json(nullptr);
  return nlohmann::json{{"search", s}};
}

// A capacity moved when one search met a load the other missed; brackets that overlap are
// within the searches' precision, whatever the percentages say.
TEST(CompareCapacity, ByTheBracketsTheSearchesEndedWith) {
  std::string why;
  auto c = compare_capacity(search_doc(1000, 1020), search_doc(1300, 1326), why);
  ASSERT_TRUE(c) << why;
  EXPECT_EQ(c->verdict, CapacityChange::Verdict::kHigher);
  EXPECT_NEAR(c->change_pct, 30.0, 1e-9);
  EXPECT_NE(c->text.find("1000 -> 1300 (+30.0%): higher"), std::string::npos) << c->text;
  c = compare_capacity(search_doc(1300, 1326), search_doc(1000, 1020), why);
  EXPECT_EQ(c->verdict, CapacityChange::Verdict::kLower);
  c = compare_capacity(search_doc(1000, 1020), search_doc(1010, 1030), why);
  EXPECT_EQ(c->verdict, CapacityChange::Verdict::kWithinPrecision);
  // A search whose whole range met says "at least": only a higher one can be told apart.
  c = compare_capacity(search_doc(5000, std::nullopt), search_doc(1000, 1020), why);
  EXPECT_EQ(c->verdict, CapacityChange::Verdict::kLower);
  EXPECT_NE(c->text.find("at least 5000"), std::string::npos) << c->text;
}

TEST(CompareCapacity, WhatCannotBeComparedSaysWhy) {
  std::string why;
  EXPECT_FALSE(compare_capacity(nlohmann::json::object(), nlohmann::json::object(), why));
  EXPECT_TRUE(why.empty());
  EXPECT_FALSE(compare_capacity(search_doc(1, 2), nlohmann::json::object(), why));
  EXPECT_NE(why.find("only one"), std::string::npos);
  EXPECT_FALSE(compare_capacity(search_doc(1, 2), search_doc(1, 2, "t"), why));
  EXPECT_NE(why.find("different variables"), std::string::npos);
  nlohmann::json none = search_doc(1, 2);
  none["search"]["capacity"] = nullptr;
  EXPECT_FALSE(compare_capacity(none, search_doc(1, 2), why));
  EXPECT_NE(why.find("found no capacity"), std::string::npos);
}

}  // namespace
}  // namespace volley::analysis
