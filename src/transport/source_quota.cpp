#include "volley/transport/source_quota.hpp"

#include <algorithm>

#include "volley/transport/address_family.hpp"

namespace volley::transport {

std::string SourceQuota::key(const boost::asio::ip::address& source) {
  const auto address = unmapped(source);
  if (address.is_v4()) {
    const auto bytes = address.to_v4().to_bytes();
    return std::string("4") + std::string(bytes.begin(), bytes.end());
  }
  // An IPv6 host is usually given a whole /64: counting its addresses one by one would give it
  // 2^64 shares.
  const auto bytes = address.to_v6().to_bytes();
  return std::string("6") + std::string(bytes.begin(), bytes.begin() + 8);
}

SourceQuota::Decision SourceQuota::admit(std::uint64_t id, const boost::asio::ip::address& source) {
  std::string k = key(source);
  auto& mine = by_source_[k];
  Decision decision{Verdict::kAdmitted};
  if (!mine.empty() && mine.size() >= limits_.per_source) {
    decision = {Verdict::kReplacesOwnOldest, *mine.begin()};
  } else if (source_of_.size() >= limits_.total && !source_of_.empty()) {
    // Linear, but only while every place is taken (a flood), over at most `total` addresses.
    const auto heaviest = std::max_element(
        by_source_.begin(), by_source_.end(),
        [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
    decision = {Verdict::kReplacesHeaviest, *heaviest->second.begin()};
  }
  if (decision.verdict != Verdict::kAdmitted) forget(decision.evict);
  by_source_[k].insert(id);  // `mine` may be gone: forget() erases an address left empty
  source_of_.emplace(id, std::move(k));
  return decision;
}

void SourceQuota::forget(std::uint64_t id) {
  const auto it = source_of_.find(id);
  if (it == source_of_.end()) return;
  const auto source = by_source_.find(it->second);
  source->second.erase(id);
  if (source->second.empty()) by_source_.erase(source);
  source_of_.erase(it);
}

std::size_t SourceQuota::held_by(const boost::asio::ip::address& source) const {
  const auto it = by_source_.find(key(source));
  return it == by_source_.end() ? 0 : it->second.size();
}

}  // namespace volley::transport
