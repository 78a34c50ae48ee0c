#include "volley/stats/latency_histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

namespace volley::stats {
namespace {

using H = LatencyHistogram;
constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

// Nearest-rank percentile of a sorted sample: the value of rank ceil(p/100 * n), rank in [1, n].
std::uint64_t exact_percentile(const std::vector<std::uint64_t>& sorted, double p) {
  const double r = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  auto rank = r < 1.0 ? std::size_t{1} : static_cast<std::size_t>(r);
  rank = std::min(rank, sorted.size());
  return sorted[rank - 1];
}

H record_all(const std::vector<std::uint64_t>& values) {
  H h;
  for (const auto v : values) h.record(v);
  return h;
}

// Every percentile must be within 2^-8 of the exact one (the midpoint bound; stricter than 1%).
void expect_percentiles_close(std::vector<std::uint64_t> values, const char* what) {
  const H h = record_all(values);
  std::sort(values.begin(), values.end());
  for (const double p :
       {0.0, 0.1, 1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99, 100.0}) {
    const auto exact = exact_percentile(values, p);
    const auto got = h.percentile(p);
    const double err = std::abs(static_cast<double>(got) - static_cast<double>(exact));
    EXPECT_LE(err, static_cast<double>(exact) / 256.0)
        << what << " p" << p << ": exact " << exact << " got " << got;
    EXPECT_LE(err, static_cast<double>(exact) * 0.01) << what << " p" << p;
  }
}

constexpr std::size_t kSamples = 200'000;

TEST(LatencyHistogramTest, PercentilesUniform) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<std::uint64_t> dist(0, 2'000'000);
  std::vector<std::uint64_t> v(kSamples);
  for (auto& x : v) x = dist(rng);
  expect_percentiles_close(v, "uniform");
}

TEST(LatencyHistogramTest, PercentilesExponential) {
  std::mt19937_64 rng(2);
  std::exponential_distribution<double> dist(1.0 / 100'000.0);  // mean 100 us
  std::vector<std::uint64_t> v(kSamples);
  for (auto& x : v) x = static_cast<std::uint64_t>(dist(rng));
  expect_percentiles_close(v, "exponential");
}

TEST(LatencyHistogramTest, PercentilesBimodal) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> fast(50'000.0, 5'000.0);       // 50 us
  std::normal_distribution<double> slow(5'000'000.0, 400'000.0);  // 5 ms
  std::bernoulli_distribution pick_slow(0.05);
  std::vector<std::uint64_t> v(kSamples);
  for (auto& x : v) {
    const double d = pick_slow(rng) ? slow(rng) : fast(rng);
    x = static_cast<std::uint64_t>(std::max(0.0, d));
  }
  expect_percentiles_close(v, "bimodal");
}

TEST(LatencyHistogramTest, PercentilesLogUniformOneNsToHundredSeconds) {
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> exponent(0.0, 11.0);  // 10^0 .. 10^11 ns
  std::vector<std::uint64_t> v(kSamples);
  for (auto& x : v) x = static_cast<std::uint64_t>(std::pow(10.0, exponent(rng)));
  expect_percentiles_close(v, "log-uniform");
}

TEST(LatencyHistogramTest, MeanAndStddevAreExact) {
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<std::uint64_t> dist(1'000'000, 1'000'100);  // small CV
  std::vector<std::uint64_t> v(10'000);
  for (auto& x : v) x = dist(rng);
  const H h = record_all(v);
  long double sum = 0;
  for (const auto x : v) sum += static_cast<long double>(x);
  const long double mean = sum / static_cast<long double>(v.size());
  long double ss = 0;
  for (const auto x : v) {
    const long double d = static_cast<long double>(x) - mean;
    ss += d * d;
  }
  const auto sd = std::sqrt(ss / static_cast<long double>(v.size()));
  EXPECT_DOUBLE_EQ(h.mean(), static_cast<double>(mean));
  EXPECT_NEAR(h.stddev(), static_cast<double>(sd), 1e-6 * static_cast<double>(sd));
  EXPECT_EQ(h.count(), v.size());
  EXPECT_EQ(h.min(), *std::min_element(v.begin(), v.end()));
  EXPECT_EQ(h.max(), *std::max_element(v.begin(), v.end()));
}

TEST(LatencyHistogramTest, MergeEqualsRecordingIntoOne) {
  std::mt19937_64 rng(6);
  std::uniform_real_distribution<double> exponent(0.0, 12.0);
  std::uniform_int_distribution<int> which(0, 2);
  H all;
  H parts[3];
  for (int i = 0; i < 50'000; ++i) {
    const auto x = static_cast<std::uint64_t>(std::pow(10.0, exponent(rng)));
    all.record(x);
    parts[which(rng)].record(x);
  }
  H merged;
  for (const auto& p : parts) merged.merge(p);
  EXPECT_EQ(merged, all);
  H other_order = parts[2];
  other_order.merge(parts[0]);
  other_order.merge(parts[1]);
  EXPECT_EQ(other_order, all);
  EXPECT_EQ(merged.percentile(99.9), all.percentile(99.9));
  // Merging an empty histogram changes nothing, and a copy is not the same as a different one.
  merged.merge(H{});
  EXPECT_EQ(merged, all);
  merged.record(std::uint64_t{1});
  EXPECT_NE(merged, all);
}

TEST(LatencyHistogramTest, RecordNEqualsRepeatedRecord) {
  H a;
  H b;
  for (int i = 0; i < 37; ++i) a.record(std::uint64_t{98'765});
  b.record_n(98'765, 37);
  b.record_n(5, 0);  // no-op
  EXPECT_EQ(a, b);
}

TEST(LatencyHistogramTest, Empty) {
  const H h;
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.mean(), 0.0);
  EXPECT_EQ(h.stddev(), 0.0);
  EXPECT_EQ(h.percentile(50), 0u);
  EXPECT_TRUE(h.sparse_buckets().empty());
  EXPECT_EQ(h.totals(), HistogramTotals{});
}

TEST(LatencyHistogramTest, OneValue) {
  H h;
  h.record(std::uint64_t{123'457});
  EXPECT_FALSE(h.empty());
  for (const double p : {0.0, 1.0, 50.0, 99.0, 100.0}) EXPECT_EQ(h.percentile(p), 123'457u);
  EXPECT_EQ(h.mean(), 123'457.0);
  EXPECT_EQ(h.stddev(), 0.0);
}

TEST(LatencyHistogramTest, ZeroNs) {
  H h;
  h.record(std::uint64_t{0});
  h.record(std::chrono::nanoseconds{-5});  // negative durations count as 0
  EXPECT_EQ(h.count(), 2u);
  EXPECT_EQ(h.bucket_count_at(0), 2u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.percentile(50), 0u);
}

TEST(LatencyHistogramTest, HugeValuesClampToTopBucketAndKeepExactMax) {
  H h;
  h.record(std::uint64_t{1} << 50);
  h.record(kU64Max);
  EXPECT_EQ(h.bucket_count_at(H::kBucketCount - 1), 2u);
  EXPECT_EQ(h.max(), kU64Max);
  EXPECT_EQ(h.min(), std::uint64_t{1} << 50);
  EXPECT_EQ(h.percentile(100), kU64Max);
  EXPECT_EQ(h.percentile(0), std::uint64_t{1} << 50);
  // Sum is exact beyond 64 bits: 2^64 - 1 + 2^50 = 2^64 + (2^50 - 1).
  EXPECT_EQ(h.totals().sum_ns, (Uint128{1, (std::uint64_t{1} << 50) - 1}));
  // (2^64 - 1)^2 + 2^100 exceeds 2^128: the sum of squares saturates instead of wrapping.
  EXPECT_EQ(h.totals().sum_sq_ns2, (Uint128{kU64Max, kU64Max}));
}

TEST(LatencyHistogramTest, PercentileArgumentIsClamped) {
  H h;
  for (std::uint64_t v = 1; v <= 100; ++v) h.record(v);
  EXPECT_EQ(h.percentile(-3), 1u);
  EXPECT_EQ(h.percentile(std::nan("")), 1u);
  EXPECT_EQ(h.percentile(250), 100u);
  EXPECT_EQ(h.percentile(50), 50u);  // exact in the one-ns buckets
  EXPECT_EQ(h.percentile(99), 99u);
}

TEST(LatencyHistogramTest, ResetEqualsFresh) {
  H h;
  h.record(std::uint64_t{77});
  h.record(std::uint64_t{1'000'000'000});
  h.reset();
  EXPECT_EQ(h, H{});
}

TEST(LatencyHistogramTest, BucketLayoutIsContiguousAndTight) {
  EXPECT_EQ(H::bucket_lower(0), 0u);
  for (std::uint32_t i = 0; i + 1 < H::kBucketCount; ++i) {
    const auto lo = H::bucket_lower(i);
    const auto hi = H::bucket_upper(i);
    ASSERT_LE(lo, hi) << i;
    ASSERT_EQ(H::bucket_index(lo), i);
    ASSERT_EQ(H::bucket_index(hi), i);
    ASSERT_EQ(H::bucket_lower(i + 1), hi + 1) << i;
    // Width <= lower / 128: the midpoint is within 2^-8 of every value in the bucket.
    ASSERT_LE(static_cast<double>(hi - lo + 1), std::max(1.0, static_cast<double>(lo) / 128.0));
    const auto mid = H::bucket_midpoint(i);
    ASSERT_GE(mid, lo);
    ASSERT_LE(mid, hi);
  }
  EXPECT_EQ(H::bucket_upper(H::kBucketCount - 1), kU64Max);
  EXPECT_LT(H::bucket_index(std::uint64_t{1} << 40), H::kBucketCount - 1);  // 2^40 ns in range
  EXPECT_EQ(H::bucket_index(H::kMaxTrackableNs - 1), H::kBucketCount - 1);
  EXPECT_EQ(H::bucket_index(H::kMaxTrackableNs), H::kBucketCount - 1);
  EXPECT_EQ(H::bucket_index(kU64Max), H::kBucketCount - 1);
  EXPECT_EQ(H::bucket_index(255), 255u);
  EXPECT_EQ(H::bucket_index(256), 256u);
  EXPECT_EQ(H::bucket_index(257), 256u);
}

TEST(LatencyHistogramTest, SparseRoundTrip) {
  H h;
  for (std::uint64_t v : {3ULL, 3ULL, 900ULL, 1'234'567ULL, 99'000'000'000ULL}) h.record(v);
  const auto sparse = h.sparse_buckets();
  ASSERT_EQ(sparse.size(), 4u);
  EXPECT_EQ(sparse[0], (SparseBucket{3, 2}));
  const auto rebuilt = H::from_sparse(sparse, h.totals());
  ASSERT_TRUE(rebuilt.has_value());
  EXPECT_EQ(*rebuilt, h);

  // Rejected: out-of-range index, min outside the first bucket, non-zero totals with no buckets.
  std::vector<SparseBucket> bad = sparse;
  bad.emplace_back(H::kBucketCount, 1);
  EXPECT_FALSE(H::from_sparse(bad, h.totals()).has_value());
  HistogramTotals wrong_min = h.totals();
  wrong_min.min_ns = 900;
  EXPECT_FALSE(H::from_sparse(sparse, wrong_min).has_value());
  EXPECT_FALSE(H::from_sparse({}, h.totals()).has_value());
  EXPECT_TRUE(H::from_sparse({}, HistogramTotals{}).has_value());
}

TEST(LatencyHistogramTest, JsonRoundTrip) {
  std::mt19937_64 rng(7);
  std::exponential_distribution<double> dist(1.0 / 1e6);
  H h;
  for (int i = 0; i < 5'000; ++i) h.record(static_cast<std::uint64_t>(dist(rng)));
  h.record(kU64Max);  // sums beyond 64 bits travel as decimal strings
  const nlohmann::json j = h;
  EXPECT_EQ(j.at("sub_bucket_bits"), 7);
  EXPECT_EQ(j.at("count"), 5'001);
  EXPECT_TRUE(j.at("sum_ns").is_string());
  const auto text = j.dump();
  const auto back = nlohmann::json::parse(text).get<H>();
  EXPECT_EQ(back, h);
  const auto again = histogram_from_json(nlohmann::json::parse(text));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, h);
  EXPECT_EQ(nlohmann::json(H{}).get<H>(), H{});
}

TEST(LatencyHistogramTest, JsonRejectsBadInput) {
  H h;
  h.record(std::uint64_t{1000});
  const nlohmann::json good = h;
  auto mutate = [&good](auto&& change) {
    nlohmann::json j = good;
    change(j);
    return histogram_from_json(j).has_value();
  };
  EXPECT_TRUE(mutate([](nlohmann::json&) {}));
  EXPECT_FALSE(mutate([](nlohmann::json& j) { j["sub_bucket_bits"] = 4; }));
  EXPECT_FALSE(mutate([](nlohmann::json& j) { j["count"] = 2; }));
  EXPECT_FALSE(mutate([](nlohmann::json& j) { j["min_ns"] = -1; }));
  EXPECT_FALSE(mutate([](nlohmann::json& j) { j["sum_ns"] = "12x"; }));
  EXPECT_FALSE(mutate([](nlohmann::json& j) { j["buckets"] = {{1ULL << 33, 1}}; }));
  EXPECT_FALSE(mutate([](nlohmann::json& j) { j["buckets"] = {{1, 2, 3}}; }));
  EXPECT_FALSE(mutate([](nlohmann::json& j) { j.erase("max_ns"); }));
  EXPECT_FALSE(histogram_from_json(nlohmann::json::array()).has_value());
}

TEST(Uint128Test, DecimalRoundTrip) {
  EXPECT_EQ(Uint128{}.to_string(), "0");
  EXPECT_EQ((Uint128{0, 42}).to_string(), "42");
  EXPECT_EQ((Uint128{1, 0}).to_string(), "18446744073709551616");
  const Uint128 max{kU64Max, kU64Max};
  EXPECT_EQ(max.to_string(), "340282366920938463463374607431768211455");
  EXPECT_EQ(Uint128::parse(max.to_string()), max);
  EXPECT_FALSE(Uint128::parse("340282366920938463463374607431768211456").has_value());
  EXPECT_FALSE(Uint128::parse("").has_value());
  EXPECT_FALSE(Uint128::parse("-1").has_value());
  EXPECT_EQ((Uint128{1, 0}).to_long_double(), 18446744073709551616.0L);
}

}  // namespace
}  // namespace volley::stats
