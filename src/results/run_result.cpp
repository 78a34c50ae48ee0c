#include "volley/results/run_result.hpp"

#include <algorithm>

namespace volley::results {

SlotCounters RunResult::totals() const {
  SlotCounters sum;
  for (const auto& g : groups) {
    for (const auto& t : g.transactions) {
      for (const auto& f : t.flowops) sum.merge(f.stats.counters);
    }
  }
  return sum;
}

std::uint64_t RunResult::transactions() const {
  std::uint64_t n = 0;
  for (const auto& g : groups) {
    for (const auto& t : g.transactions) n += t.stats.counters.ops;
  }
  return n;
}

void StrandCounts::merge(const StrandCounts& other) {
  ops += other.ops;
  bytes += other.bytes;
  transactions += other.transactions;
}

namespace {

void merge_strand_counts(std::vector<StrandCounts>& into, const std::vector<StrandCounts>& part) {
  if (into.size() < part.size()) into.resize(part.size());
  for (std::size_t s = 0; s < part.size(); ++s) into[s].merge(part[s]);
}

}  // namespace

void merge_into(RunResult& into, const RunResult& part) {
  if (into.groups.empty() && into.windows.empty()) {
    auto processes = std::move(into.processes);
    into = part;
    into.processes.insert(into.processes.begin(), processes.begin(), processes.end());
    return;
  }
  for (std::size_t g = 0; g < std::min(into.groups.size(), part.groups.size()); ++g) {
    GroupResult& a = into.groups[g];
    const GroupResult& b = part.groups[g];
    a.strands += b.strands;
    merge_strand_counts(a.strand_counts, b.strand_counts);
    for (std::size_t t = 0; t < std::min(a.transactions.size(), b.transactions.size()); ++t) {
      TxnResult& x = a.transactions[t];
      const TxnResult& y = b.transactions[t];
      x.stats.merge(y.stats);
      if (y.uncorrected_latency) {
        if (x.uncorrected_latency) {
          x.uncorrected_latency->merge(*y.uncorrected_latency);
        } else {
          x.uncorrected_latency = y.uncorrected_latency;
        }
      }
      for (std::size_t f = 0; f < std::min(x.flowops.size(), y.flowops.size()); ++f) {
        x.flowops[f].stats.merge(y.flowops[f].stats);
        if (y.flowops[f].handshakes) {
          if (!x.flowops[f].handshakes) x.flowops[f].handshakes.emplace();
          x.flowops[f].handshakes->full.merge(y.flowops[f].handshakes->full);
          x.flowops[f].handshakes->resumed.merge(y.flowops[f].handshakes->resumed);
        }
      }
    }
  }
  // Each process released a step on its own clock, within milliseconds of the others: the
  // step's window runs from the first start to the last end.
  for (std::size_t w = 0; w < std::min(into.windows.size(), part.windows.size()); ++w) {
    TxnWindow& a = into.windows[w];
    const TxnWindow& b = part.windows[w];
    const std::int64_t end =
        std::max(a.start_unix_ns + a.elapsed.count(), b.start_unix_ns + b.elapsed.count());
    if (a.start_unix_ns == 0 || (b.start_unix_ns != 0 && b.start_unix_ns < a.start_unix_ns)) {
      a.start_unix_ns = b.start_unix_ns;
    }
    a.elapsed = std::chrono::nanoseconds(end - a.start_unix_ns);
    a.is_duration = a.is_duration || b.is_duration;
    a.connections_read_exactly += b.connections_read_exactly;
  }
  into.connections_requested += part.connections_requested;
  into.connections_established += part.connections_established;
  into.failed_strands += part.failed_strands;
  into.error_samples.insert(into.error_samples.end(), part.error_samples.begin(),
                            part.error_samples.end());
  into.processes.insert(into.processes.end(), part.processes.begin(), part.processes.end());
}

double memory_per_connection(const RunResult& result) {
  std::int64_t growth = 0;
  std::uint64_t connections = 0;
  for (const auto& p : result.processes) {
    growth += p.rss_growth_bytes;
    connections += p.connections;
  }
  return connections == 0 ? 0.0 : static_cast<double>(growth) / static_cast<double>(connections);
}

}  // namespace volley::results
