#include "volley/results/slot_stats.hpp"

#include <algorithm>
#include <numeric>

namespace volley::results {

std::uint64_t SlotCounters::error_total() const {
  return std::accumulate(errors.begin(), errors.end(), std::uint64_t{0});
}

void SlotCounters::merge(const SlotCounters& other) {
  ops += other.ops;
  bytes_read += other.bytes_read;
  bytes_written += other.bytes_written;
  expired += other.expired;
  for (std::size_t i = 0; i < errors.size(); ++i) errors[i] += other.errors[i];
  datagrams.merge(other.datagrams);
  zerocopy.merge(other.zerocopy);
  scheduled += other.scheduled;
}

void ZeroCopyCounters::merge(const ZeroCopyCounters& other) {
  sends += other.sends;
  zero_copied += other.zero_copied;
  copied += other.copied;
}

void DatagramCounters::merge(const DatagramCounters& other) {
  sent += other.sent;
  received += other.received;
  lost += other.lost;
  late += other.late;
  duplicates += other.duplicates;
  timeouts += other.timeouts;
  jitter_ns = std::max(jitter_ns, other.jitter_ns);
}

void SlotStats::merge(const SlotStats& other) {
  counters.merge(other.counters);
  latency.merge(other.latency);
  tcp.merge(other.tcp);
  add_tls(other.tls);
}

void SlotStats::add_tls(const std::string& negotiated) {
  if (negotiated.empty()) return;
  if (tls.empty()) {
    tls = negotiated;
    return;
  }
  // Each of `negotiated`'s texts that is not here yet.
  std::size_t from = 0;
  while (from <= negotiated.size()) {
    const std::size_t end = std::min(negotiated.find("; ", from), negotiated.size());
    const std::string one = negotiated.substr(from, end - from);
    bool known = false;
    for (std::size_t at = 0; at <= tls.size();) {
      const std::size_t stop = std::min(tls.find("; ", at), tls.size());
      known = known || tls.compare(at, stop - at, one) == 0;
      at = stop + 2;
    }
    if (!known && !one.empty()) tls += "; " + one;
    from = end + 2;
  }
}

void SlotStats::reset() {
  counters = SlotCounters{};
  latency.reset();
  tcp = stats::TcpSummary{};
  tls.clear();
}

}  // namespace volley::results
