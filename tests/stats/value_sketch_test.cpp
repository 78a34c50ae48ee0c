// ValueSketch: exact count, min, max and sum; quantiles within 1% of a recorded value; merging
// equal to recording everything in one; the wire form read back, and anything else refused.
#include "volley/stats/value_sketch.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

namespace volley::stats {
namespace {

using nlohmann::json;

/// The nearest-rank quantile of `values` (sorted here).
double exact_quantile(std::vector<std::uint64_t> values, double q) {
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size()))) - 1;
  return static_cast<double>(values[rank]);
}

TEST(ValueSketch, EmptyIsZeroEverywhere) {
  const ValueSketch s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.quantile(0.5), 0.0);
  EXPECT_EQ(s.min(), 0U);
  EXPECT_EQ(s.max(), 0U);
}

// Values over six decades, as round-trip times and rates spread: every quantile within 1%.
TEST(ValueSketch, QuantilesAreWithinOnePercentOfTheRecordedValue) {
  std::mt19937_64 random(7);
  std::vector<std::uint64_t> values;
  ValueSketch s;
  for (int i = 0; i < 20000; ++i) {
    const auto v =
        static_cast<std::uint64_t>(std::exp(std::uniform_real_distribution<>(0, 14)(random)));
    values.push_back(v);
    s.add(v);
  }
  for (const double q : {0.01, 0.25, 0.5, 0.9, 0.99, 0.999}) {
    const double exact = exact_quantile(values, q);
    EXPECT_NEAR(s.quantile(q), exact, exact * 0.01) << "q " << q;
  }
  EXPECT_EQ(s.count(), values.size());
  EXPECT_EQ(s.min(), *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(s.max(), *std::max_element(values.begin(), values.end()));
  EXPECT_EQ(s.quantile(0), static_cast<double>(s.min()));
  EXPECT_EQ(s.quantile(1), static_cast<double>(s.max()));
}

TEST(ValueSketch, ZerosAndOneValue) {
  ValueSketch s;
  s.add(0);
  s.add(0);
  s.add(100);
  EXPECT_EQ(s.quantile(0.5), 0.0);
  EXPECT_NEAR(s.quantile(0.9), 100.0, 1.0);  // its bucket's middle, within 1%
  EXPECT_EQ(s.sum(), 100U);
}

// Two workers' sketches merged give what one sketch of all their values gives: the median of
// a host's connections does not depend on how they were spread.
TEST(ValueSketch, MergingIsRecordingEverythingInOne) {
  ValueSketch a;
  ValueSketch b;
  ValueSketch all;
  for (std::uint64_t v = 0; v < 5000; v += 7) {
    (v % 3 == 0 ? a : b).add(v * v);
    all.add(v * v);
  }
  a.merge(b);
  EXPECT_EQ(a, all);
  ValueSketch empty;
  empty.merge(all);
  EXPECT_EQ(empty, all);
}

TEST(ValueSketch, TheWireFormReadsBack) {
  ValueSketch s;
  for (const std::uint64_t v : {0U, 1U, 2U, 50U, 51U, 1'000'000U}) s.add(v);
  const json j = s;
  ValueSketch back;
  ASSERT_TRUE(ValueSketch::from_json(j, back));
  EXPECT_EQ(back, s);
}

TEST(ValueSketch, AMalformedWireFormIsRefused) {
  ValueSketch s;
  s.add(10);
  s.add(1000);
  const json good = s;
  ValueSketch out;
  for (const char* key : {"n", "min", "max", "sum", "zeros", "buckets"}) {
    json bad = good;
    bad.erase(key);
    EXPECT_FALSE(ValueSketch::from_json(bad, out)) << key;
  }
  json counts_disagree = good;
  counts_disagree["n"] = 3;
  EXPECT_FALSE(ValueSketch::from_json(counts_disagree, out));
  json unordered = good;
  unordered["buckets"] = json::array({json::array({300, 1}), json::array({100, 1})});
  EXPECT_FALSE(ValueSketch::from_json(unordered, out));
  json negative = good;
  negative["buckets"] = json::array({json::array({-1, 1}), json::array({100, 1})});
  EXPECT_FALSE(ValueSketch::from_json(negative, out));
  json huge = good;
  huge["buckets"] = json::array({json::array({100, 1}), json::array({1'000'000, 1})});
  EXPECT_FALSE(ValueSketch::from_json(huge, out));
  EXPECT_FALSE(ValueSketch::from_json(json::array(), out));
  EXPECT_TRUE(out.empty());  // untouched by every refusal
}

}  // namespace
}  // namespace volley::stats
