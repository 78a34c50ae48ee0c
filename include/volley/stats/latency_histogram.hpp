#pragma once
/// \file
/// volley::stats holds the measurement types filled on the hot path and merged afterwards: the
/// latency histogram (this file), counters and per-worker recorders. It does not sample the
/// system (that is volley::sampling) and does not format anything (that is volley::report).
///
/// LatencyHistogram is a log-linear histogram over nanoseconds (neper's lr_bucket, HdrHistogram's
/// layout): values 0..255 ns get one bucket each; every octave [2^m, 2^(m+1)) above that is split
/// into 2^kSubBucketBits = 128 equal buckets. A bucket's representative value (its midpoint) is
/// within 2^-8 (0.39%) of every value in it. Values at or above kMaxTrackableNs (2^44 ns, about
/// 4.9 hours) are counted in the top bucket; min, max, sum and the sum of squares stay exact.

#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace volley::stats {

namespace detail {
// GCC and Clang provide a 128-bit integer on every 64-bit target volley builds for; the
// __extension__ keeps -Wpedantic quiet. Never part of the public API (see Uint128).
__extension__ typedef unsigned __int128 Wide;  // NOLINT(modernize-use-using)
}  // namespace detail

/// An exact unsigned 128-bit integer as two 64-bit halves (the sums of ns and of ns^2).
/// Thread: any (value type).
struct Uint128 {
  std::uint64_t high = 0;  ///< Bits 64..127.
  std::uint64_t low = 0;   ///< Bits 0..63.

  friend bool operator==(const Uint128&, const Uint128&) = default;
  /// Nearest long double (exact below 2^64 on x86-64).
  [[nodiscard]] long double to_long_double() const;
  /// Decimal digits, e.g. "340282366920938463463374607431768211455".
  [[nodiscard]] std::string to_string() const;
  /// Parses decimal digits only; nullopt on empty input, other characters or overflow.
  [[nodiscard]] static std::optional<Uint128> parse(std::string_view decimal);
};

/// One non-empty bucket on the wire: {bucket index, count}.
using SparseBucket = std::pair<std::uint32_t, std::uint64_t>;

/// The exact moments a histogram keeps besides its buckets (for rebuilding it from the wire).
/// Thread: any (value type).
struct HistogramTotals {
  std::uint64_t min_ns = 0;  ///< Smallest value recorded (0 when empty).
  std::uint64_t max_ns = 0;  ///< Largest value recorded (0 when empty).
  Uint128 sum_ns;            ///< Sum of all values, ns (exact).
  Uint128 sum_sq_ns2;        ///< Sum of squares, ns^2 (exact; saturates at 2^128 - 1).
  friend bool operator==(const HistogramTotals&, const HistogramTotals&) = default;
};

/// Log-linear latency histogram over nanoseconds. The bucket array is allocated once, in the
/// constructor; record() never allocates, locks or touches atomics.
/// Thread: worker-affine while recording (one per worker and StatSlot); a plain value otherwise,
/// handed to another thread by move or copy.
class LatencyHistogram {
 public:
  /// Sub-bucket bits k: 2^k buckets per octave, relative error of a bucket midpoint <= 2^-(k+1).
  static constexpr unsigned kSubBucketBits = 7;
  static constexpr std::uint64_t kSubBucketCount = std::uint64_t{1} << kSubBucketBits;
  /// Values >= this many ns (2^44 ns ~ 4.9 h) share the top bucket.
  static constexpr std::uint64_t kMaxTrackableNs = std::uint64_t{1} << 44;
  /// Number of buckets: 256 one-ns buckets, then 128 per octave from 2^8 up to 2^44.
  static constexpr std::uint32_t kBucketCount = static_cast<std::uint32_t>((44 - 7 + 1) * 128);

  /// An empty histogram (allocates the kBucketCount buckets).
  LatencyHistogram();

  /// Records one value in ns. O(1), no allocation. Values >= kMaxTrackableNs go to the top bucket.
  void record(std::uint64_t ns) {
    // record_n(ns, 1) without the multiplications by the count and the overflow test they need:
    // a ping-pong records three values per round trip.
    ++counts_[bucket_index(ns)];
    ++count_;
    if (ns < min_) min_ = ns;
    if (ns > max_) max_ = ns;
    sum_ += ns;
    const detail::Wide square = static_cast<detail::Wide>(ns) * ns;
    if (__builtin_add_overflow(sum_sq_, square, &sum_sq_)) sum_sq_ = ~detail::Wide{0};
  }
  /// Records a duration; negative durations count as 0 ns.
  void record(std::chrono::nanoseconds d) {
    record(d.count() < 0 ? std::uint64_t{0} : static_cast<std::uint64_t>(d.count()));
  }
  /// Records `count` occurrences of `ns` (count 0 is a no-op). O(1), no allocation.
  void record_n(std::uint64_t ns, std::uint64_t count) {
    if (count == 0) return;
    counts_[bucket_index(ns)] += count;
    count_ += count;
    if (ns < min_) min_ = ns;
    if (ns > max_) max_ = ns;
    sum_ += static_cast<detail::Wide>(ns) * count;
    add_squares(ns, count);
  }

  /// Adds every bucket and moment of `other` into this one (the result equals recording both
  /// streams into one histogram).
  void merge(const LatencyHistogram& other);
  /// Forgets everything recorded (keeps the allocation).
  void reset();

  /// Number of values recorded.
  [[nodiscard]] std::uint64_t count() const { return count_; }
  [[nodiscard]] bool empty() const { return count_ == 0; }
  /// Exact smallest / largest value recorded, ns; 0 when empty.
  [[nodiscard]] std::uint64_t min() const { return count_ == 0 ? 0 : min_; }
  [[nodiscard]] std::uint64_t max() const { return count_ == 0 ? 0 : max_; }
  /// Exact arithmetic mean, ns; 0 when empty.
  [[nodiscard]] double mean() const;
  /// Population standard deviation (divides by n) from the exact sums, ns; 0 when empty.
  [[nodiscard]] double stddev() const;
  /// Nearest-rank percentile, p in [0, 100] (clamped; NaN counts as 0): the representative value
  /// (midpoint) of the bucket holding the value of rank ceil(p/100 * n), clamped to [min, max];
  /// rank 1 gives min() and rank n gives max() exactly. 0 when empty.
  [[nodiscard]] std::uint64_t percentile(double p) const;

  /// Count in bucket `index` (0 when index >= kBucketCount).
  [[nodiscard]] std::uint64_t bucket_count_at(std::uint32_t index) const;
  /// All non-empty buckets in increasing index order, for the wire and --latency-log.
  [[nodiscard]] std::vector<SparseBucket> sparse_buckets() const;
  /// The exact moments (min, max, sums) to send along with sparse_buckets().
  [[nodiscard]] HistogramTotals totals() const;
  /// Rebuilds a histogram from sparse_buckets() and totals(). nullopt when a bucket index is out of
  /// range, the counts overflow, or min/max do not fall in the first/last non-empty bucket.
  [[nodiscard]] static std::optional<LatencyHistogram> from_sparse(
      std::span<const SparseBucket> buckets, const HistogramTotals& totals);

  /// Bucket holding `ns` (values >= kMaxTrackableNs map to kBucketCount - 1).
  [[nodiscard]] static constexpr std::uint32_t bucket_index(std::uint64_t ns) {
    // s = 0 for ns < 256, else floor(log2 ns) - 7; index = s * 128 + (ns >> s).
    const auto width = static_cast<unsigned>(std::bit_width(ns | kSubBucketCount));
    const unsigned shift = width - (kSubBucketBits + 1);
    const std::uint64_t index = (std::uint64_t{shift} << kSubBucketBits) + (ns >> shift);
    return index < kBucketCount ? static_cast<std::uint32_t>(index) : kBucketCount - 1;
  }
  /// Smallest value (ns) that maps to bucket `index` (index clamped to kBucketCount - 1).
  [[nodiscard]] static std::uint64_t bucket_lower(std::uint32_t index);
  /// Largest value (ns) that maps to bucket `index`; UINT64_MAX for the top bucket.
  [[nodiscard]] static std::uint64_t bucket_upper(std::uint32_t index);
  /// Representative value of bucket `index`: lower + width / 2 (the natural width for the top one).
  [[nodiscard]] static std::uint64_t bucket_midpoint(std::uint32_t index);

  friend bool operator==(const LatencyHistogram&, const LatencyHistogram&) = default;

 private:
  void add_squares(std::uint64_t ns, std::uint64_t count) {
    const detail::Wide square = static_cast<detail::Wide>(ns) * ns;
    // count * square may exceed 2^128 only for absurd inputs; saturate instead of wrapping.
    constexpr detail::Wide kMax = ~detail::Wide{0};
    if (count != 1 && square != 0 && count > kMax / square) {
      sum_sq_ = kMax;
      return;
    }
    const detail::Wide add = square * count;
    sum_sq_ = (sum_sq_ > kMax - add) ? kMax : sum_sq_ + add;
  }

  std::vector<std::uint64_t> counts_;  // kBucketCount entries, allocated once
  std::uint64_t count_ = 0;
  std::uint64_t min_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_ = 0;
  detail::Wide sum_ = 0;     // ns
  detail::Wide sum_sq_ = 0;  // ns^2, saturating
};

/// JSON form (documented in docs/statistics.md):
/// {"sub_bucket_bits": 7, "bucket_count": 4864, "count": N, "min_ns": u64, "max_ns": u64,
///  "sum_ns": "decimal", "sum_sq_ns2": "decimal", "buckets": [[index, count], ...]}
/// The sums are decimal strings because they can exceed 64 bits.
void to_json(nlohmann::json& j, const LatencyHistogram& h);
/// nlohmann's convention (j.get<LatencyHistogram>()): throws nlohmann::json::exception when `j` is
/// not a histogram of this layout or is inconsistent.
void from_json(const nlohmann::json& j, LatencyHistogram& h);
/// Non-throwing variant of from_json: nullopt when `j` is not a valid histogram of this layout.
[[nodiscard]] std::optional<LatencyHistogram> histogram_from_json(const nlohmann::json& j);

}  // namespace volley::stats
