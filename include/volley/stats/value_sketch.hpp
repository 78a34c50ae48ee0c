#pragma once
/// \file
/// ValueSketch: a mergeable summary of many non-negative integer values (one per connection: a
/// round-trip time, a window), exact in count, min, max and sum, with any quantile within 1% of
/// a value that was recorded. Values fall in logarithmic buckets of ratio 1.02 (DDSketch's
/// layout), kept sparse: connections of one transaction hold similar values, so a sketch of
/// 50,000 connections is a handful of buckets. Merging adds buckets, so the median of a host's
/// connections is the same whether its workers or processes were merged first.
#include <cstdint>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace volley::stats {

/// a + b, or 2^64 - 1 when that overflows: sums of counts that must not wrap.
[[nodiscard]] constexpr std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/// Thread: a plain value (one owner at a time).
class ValueSketch {
 public:
  /// The ratio between bucket bounds: a bucket's representative is within 1% of its values.
  static constexpr double kRatio = 1.02;

  void add(std::uint64_t value);
  void merge(const ValueSketch& other);

  [[nodiscard]] bool empty() const { return count_ == 0; }
  [[nodiscard]] std::uint64_t count() const { return count_; }
  [[nodiscard]] std::uint64_t min() const { return min_; }
  [[nodiscard]] std::uint64_t max() const { return max_; }
  /// Saturates at 2^64 - 1.
  [[nodiscard]] std::uint64_t sum() const { return sum_; }
  /// The value at quantile `q` in [0, 1]: 0 when empty, min at 0, max at 1, otherwise the
  /// representative of the bucket holding the rank, clamped to [min, max].
  [[nodiscard]] double quantile(double q) const;

  /// The complete form, for the wire between processes and hosts:
  /// {"n", "min", "max", "sum", "zeros", "buckets": [[index, count], ...]}.
  friend void to_json(nlohmann::json& j, const ValueSketch& s);
  /// Rebuilds a sketch from to_json's form; false (and `out` untouched) when anything is
  /// missing, of the wrong type, or inconsistent (bucket counts that do not add up to n).
  [[nodiscard]] static bool from_json(const nlohmann::json& j, ValueSketch& out);

  friend bool operator==(const ValueSketch&, const ValueSketch&) = default;

 private:
  [[nodiscard]] static std::int32_t bucket_of(std::uint64_t value);

  std::uint64_t count_ = 0;
  std::uint64_t min_ = 0;
  std::uint64_t max_ = 0;
  std::uint64_t sum_ = 0;
  std::uint64_t zeros_ = 0;  ///< values 0, which have no logarithm
  /// (bucket index, count), sorted by index; bucket i holds values in [kRatio^i, kRatio^(i+1)).
  std::vector<std::pair<std::int32_t, std::uint64_t>> buckets_;
};

}  // namespace volley::stats
