#include "volley/stats/latency_histogram.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace volley::stats {
namespace {

using detail::Wide;

constexpr Wide to_wide(const Uint128& v) { return (static_cast<Wide>(v.high) << 64) | v.low; }

constexpr Uint128 from_wide(Wide v) {
  return Uint128{static_cast<std::uint64_t>(v >> 64), static_cast<std::uint64_t>(v)};
}

long double wide_to_long_double(Wide v) {
  return static_cast<long double>(static_cast<std::uint64_t>(v >> 64)) * 18446744073709551616.0L +
         static_cast<long double>(static_cast<std::uint64_t>(v));
}

// Shift (log2 of the bucket width) of bucket `index`.
constexpr unsigned bucket_shift(std::uint32_t index) {
  const std::uint32_t octave = index >> LatencyHistogram::kSubBucketBits;
  return octave == 0 ? 0U : octave - 1U;
}

}  // namespace

// ---- Uint128 -------------------------------------------------------------------------------

long double Uint128::to_long_double() const { return wide_to_long_double(to_wide(*this)); }

std::string Uint128::to_string() const {
  Wide v = to_wide(*this);
  if (v == 0) return "0";
  std::string digits;
  while (v != 0) {
    digits.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  std::reverse(digits.begin(), digits.end());
  return digits;
}

std::optional<Uint128> Uint128::parse(std::string_view decimal) {
  if (decimal.empty()) return std::nullopt;
  constexpr Wide kMax = ~Wide{0};
  Wide v = 0;
  for (const char c : decimal) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<unsigned>(c - '0');
    if (v > (kMax - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  return from_wide(v);
}

// ---- LatencyHistogram ----------------------------------------------------------------------

LatencyHistogram::LatencyHistogram() : counts_(kBucketCount, 0) {}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  for (std::size_t i = 0; i < kBucketCount; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
  constexpr Wide kMax = ~Wide{0};
  sum_sq_ = (sum_sq_ > kMax - other.sum_sq_) ? kMax : sum_sq_ + other.sum_sq_;
}

void LatencyHistogram::reset() {
  std::fill(counts_.begin(), counts_.end(), std::uint64_t{0});
  count_ = 0;
  min_ = std::numeric_limits<std::uint64_t>::max();
  max_ = 0;
  sum_ = 0;
  sum_sq_ = 0;
}

double LatencyHistogram::mean() const {
  if (count_ == 0) return 0.0;
  return static_cast<double>(wide_to_long_double(sum_) / static_cast<long double>(count_));
}

double LatencyHistogram::stddev() const {
  if (count_ < 2) return 0.0;
  const auto n = static_cast<long double>(count_);
  const long double mean = wide_to_long_double(sum_) / n;
  const long double variance = wide_to_long_double(sum_sq_) / n - mean * mean;
  return variance > 0 ? static_cast<double>(std::sqrt(variance)) : 0.0;
}

std::uint64_t LatencyHistogram::percentile(double p) const {
  if (count_ == 0) return 0;
  if (!(p > 0.0)) p = 0.0;  // also catches NaN
  if (p > 100.0) p = 100.0;
  const double exact_rank = std::ceil(p / 100.0 * static_cast<double>(count_));
  std::uint64_t rank = exact_rank < 1.0 ? 1 : static_cast<std::uint64_t>(exact_rank);
  if (rank >= count_) return max_;
  if (rank == 1) return min_;
  std::uint64_t cumulative = 0;
  for (std::uint32_t i = 0; i < kBucketCount; ++i) {
    cumulative += counts_[i];
    if (cumulative >= rank) return std::clamp(bucket_midpoint(i), min_, max_);
  }
  return max_;  // unreachable when the counts are consistent
}

std::uint64_t LatencyHistogram::bucket_count_at(std::uint32_t index) const {
  return index < kBucketCount ? counts_[index] : 0;
}

std::vector<SparseBucket> LatencyHistogram::sparse_buckets() const {
  std::vector<SparseBucket> out;
  for (std::uint32_t i = 0; i < kBucketCount; ++i) {
    if (counts_[i] != 0) out.emplace_back(i, counts_[i]);
  }
  return out;
}

HistogramTotals LatencyHistogram::totals() const {
  return HistogramTotals{min(), max(), from_wide(sum_), from_wide(sum_sq_)};
}

std::optional<LatencyHistogram> LatencyHistogram::from_sparse(std::span<const SparseBucket> buckets,
                                                              const HistogramTotals& totals) {
  LatencyHistogram h;
  std::uint32_t first = kBucketCount;
  std::uint32_t last = 0;
  for (const auto& [index, count] : buckets) {
    if (index >= kBucketCount) return std::nullopt;
    if (count == 0) continue;
    if (h.count_ > std::numeric_limits<std::uint64_t>::max() - count) return std::nullopt;
    h.counts_[index] += count;
    h.count_ += count;
    first = std::min(first, index);
    last = std::max(last, index);
  }
  if (h.count_ == 0) {
    const bool zero_totals = totals == HistogramTotals{};
    return zero_totals ? std::optional<LatencyHistogram>(std::move(h)) : std::nullopt;
  }
  if (totals.min_ns > totals.max_ns || bucket_index(totals.min_ns) != first ||
      bucket_index(totals.max_ns) != last) {
    return std::nullopt;
  }
  h.min_ = totals.min_ns;
  h.max_ = totals.max_ns;
  h.sum_ = to_wide(totals.sum_ns);
  h.sum_sq_ = to_wide(totals.sum_sq_ns2);
  return h;
}

std::uint64_t LatencyHistogram::bucket_lower(std::uint32_t index) {
  index = std::min(index, kBucketCount - 1);
  const unsigned shift = bucket_shift(index);
  const std::uint64_t sub = index - (std::uint64_t{shift} << kSubBucketBits);
  return sub << shift;
}

std::uint64_t LatencyHistogram::bucket_upper(std::uint32_t index) {
  if (index >= kBucketCount - 1) return std::numeric_limits<std::uint64_t>::max();
  return bucket_lower(index) + (std::uint64_t{1} << bucket_shift(index)) - 1;
}

std::uint64_t LatencyHistogram::bucket_midpoint(std::uint32_t index) {
  index = std::min(index, kBucketCount - 1);
  return bucket_lower(index) + ((std::uint64_t{1} << bucket_shift(index)) >> 1);
}

// ---- JSON ----------------------------------------------------------------------------------

void to_json(nlohmann::json& j, const LatencyHistogram& h) {
  const HistogramTotals t = h.totals();
  nlohmann::json buckets = nlohmann::json::array();
  for (const auto& [index, count] : h.sparse_buckets()) {
    buckets.push_back(nlohmann::json::array({index, count}));
  }
  j = nlohmann::json{
      {"sub_bucket_bits", LatencyHistogram::kSubBucketBits},
      {"bucket_count", LatencyHistogram::kBucketCount},
      {"count", h.count()},
      {"min_ns", t.min_ns},
      {"max_ns", t.max_ns},
      {"sum_ns", t.sum_ns.to_string()},
      {"sum_sq_ns2", t.sum_sq_ns2.to_string()},
      {"buckets", std::move(buckets)},
  };
}

namespace {

// A non-negative JSON integer (nlohmann's get<> would wrap negatives and truncate silently).
std::uint64_t get_u64(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  }
  throw nlohmann::json::type_error::create(302, "expected a non-negative integer", &v);
}

}  // namespace

void from_json(const nlohmann::json& j, LatencyHistogram& h) {
  using nlohmann::json;
  if (get_u64(j.at("sub_bucket_bits")) != LatencyHistogram::kSubBucketBits ||
      get_u64(j.at("bucket_count")) != LatencyHistogram::kBucketCount) {
    throw json::other_error::create(501, "histogram layout differs from this build's", &j);
  }
  const auto parse_sum = [&j](const char* key) {
    auto v = Uint128::parse(j.at(key).get<std::string>());
    if (!v) throw json::other_error::create(501, std::string("bad decimal in ") + key, &j);
    return *v;
  };
  HistogramTotals totals;
  totals.min_ns = get_u64(j.at("min_ns"));
  totals.max_ns = get_u64(j.at("max_ns"));
  totals.sum_ns = parse_sum("sum_ns");
  totals.sum_sq_ns2 = parse_sum("sum_sq_ns2");
  std::vector<SparseBucket> buckets;
  for (const auto& b : j.at("buckets")) {
    if (!b.is_array() || b.size() != 2) {
      throw json::other_error::create(501, "bucket must be [index, count]", &b);
    }
    const std::uint64_t index = get_u64(b[0]);
    if (index >= LatencyHistogram::kBucketCount) {
      throw json::out_of_range::create(401, "bucket index out of range", &b);
    }
    buckets.emplace_back(static_cast<std::uint32_t>(index), get_u64(b[1]));
  }
  auto built = LatencyHistogram::from_sparse(buckets, totals);
  if (!built || built->count() != get_u64(j.at("count"))) {
    throw json::other_error::create(501, "inconsistent histogram", &j);
  }
  h = std::move(*built);
}

std::optional<LatencyHistogram> histogram_from_json(const nlohmann::json& j) {
  try {
    return j.get<LatencyHistogram>();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace volley::stats
