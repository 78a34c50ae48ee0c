#include "volley/stats/value_sketch.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

namespace volley::stats {

namespace {

/// The largest index a 64-bit value can have (log base 1.02 of 2^64 is about 2240).
constexpr std::int32_t kMaxIndex = 2300;

}  // namespace

std::int32_t ValueSketch::bucket_of(std::uint64_t value) {
  const double index = std::floor(std::log(static_cast<double>(value)) / std::log(kRatio));
  return static_cast<std::int32_t>(std::clamp(index, 0.0, static_cast<double>(kMaxIndex)));
}

void ValueSketch::add(std::uint64_t value) {
  min_ = count_ == 0 ? value : std::min(min_, value);
  max_ = count_ == 0 ? value : std::max(max_, value);
  ++count_;
  sum_ = saturating_add(sum_, value);
  if (value == 0) {
    ++zeros_;
    return;
  }
  const std::int32_t index = bucket_of(value);
  auto it = std::lower_bound(buckets_.begin(), buckets_.end(), index,
                             [](const auto& bucket, std::int32_t i) { return bucket.first < i; });
  if (it != buckets_.end() && it->first == index) {
    ++it->second;
  } else {
    buckets_.insert(it, {index, 1});
  }
}

void ValueSketch::merge(const ValueSketch& other) {
  if (other.count_ == 0) return;
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = count_ == 0 ? other.max_ : std::max(max_, other.max_);
  count_ += other.count_;
  sum_ = saturating_add(sum_, other.sum_);
  zeros_ += other.zeros_;
  std::vector<std::pair<std::int32_t, std::uint64_t>> merged;
  merged.reserve(buckets_.size() + other.buckets_.size());
  auto a = buckets_.begin();
  auto b = other.buckets_.begin();
  while (a != buckets_.end() || b != other.buckets_.end()) {
    if (b == other.buckets_.end() || (a != buckets_.end() && a->first < b->first)) {
      merged.push_back(*a++);
    } else if (a == buckets_.end() || b->first < a->first) {
      merged.push_back(*b++);
    } else {
      merged.emplace_back(a->first, a->second + b->second);
      ++a;
      ++b;
    }
  }
  buckets_ = std::move(merged);
}

double ValueSketch::quantile(double q) const {
  if (count_ == 0) return 0;
  if (q <= 0) return static_cast<double>(min_);
  if (q >= 1) return static_cast<double>(max_);
  // The rank of the value asked for, from 0 (the nearest-rank definition).
  const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_))) - 1;
  if (rank < zeros_) return 0;
  std::uint64_t seen = zeros_;
  for (const auto& [index, n] : buckets_) {
    seen += n;
    if (rank < seen) {
      // The bucket's geometric middle: within 1% of every value in it.
      const double middle = std::pow(kRatio, static_cast<double>(index) + 0.5);
      return std::clamp(middle, static_cast<double>(min_), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

void to_json(nlohmann::json& j, const ValueSketch& s) {
  nlohmann::json buckets = nlohmann::json::array();
  for (const auto& [index, n] : s.buckets_) buckets.push_back({index, n});
  j = {{"n", s.count_}, {"min", s.min_},     {"max", s.max_},
       {"sum", s.sum_}, {"zeros", s.zeros_}, {"buckets", std::move(buckets)}};
}

bool ValueSketch::from_json(const nlohmann::json& j, ValueSketch& out) {
  if (!j.is_object()) return false;
  for (const char* key : {"n", "min", "max", "sum", "zeros"}) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number_unsigned()) return false;
  }
  const auto list = j.find("buckets");
  if (list == j.end() || !list->is_array()) return false;
  ValueSketch s;
  s.count_ = j.at("n").get<std::uint64_t>();
  s.min_ = j.at("min").get<std::uint64_t>();
  s.max_ = j.at("max").get<std::uint64_t>();
  s.sum_ = j.at("sum").get<std::uint64_t>();
  s.zeros_ = j.at("zeros").get<std::uint64_t>();
  std::uint64_t total = s.zeros_;
  for (const auto& b : *list) {
    if (!b.is_array() || b.size() != 2 || !b[0].is_number_integer() || !b[1].is_number_unsigned()) {
      return false;
    }
    const auto index = b[0].get<std::int64_t>();
    const auto n = b[1].get<std::uint64_t>();
    // Indices strictly increasing, within range; counts positive and adding up to n.
    if (index < 0 || index > kMaxIndex || n == 0 || n > s.count_ - std::min(total, s.count_)) {
      return false;
    }
    if (!s.buckets_.empty() && index <= s.buckets_.back().first) return false;
    s.buckets_.emplace_back(static_cast<std::int32_t>(index), n);
    total += n;
  }
  if (total != s.count_ || (s.count_ > 0 && s.min_ > s.max_)) return false;
  out = std::move(s);
  return true;
}

}  // namespace volley::stats
