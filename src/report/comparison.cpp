#include "volley/report/comparison.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace volley::report {
namespace {

bool has_hosts(const RunReport& report) {
  return std::any_of(report.slot_names.begin(), report.slot_names.end(),
                     [](const SlotName& n) { return !n.host.empty(); });
}

/// Whether some flowop of group `group` talks to `host`.
bool group_serves(const RunReport& report, std::size_t group, std::string_view host) {
  return std::any_of(report.slot_names.begin(), report.slot_names.end(), [&](const SlotName& n) {
    return n.group == group && n.flowop && n.host == host;
  });
}

void fill_differences(SideComparison& c) {
  if (!c.missing.empty()) return;
  const auto d = [](std::uint64_t m, std::uint64_t s) {
    return difference_pct(static_cast<double>(m), static_cast<double>(s));
  };
  c.seconds_difference_pct = difference_pct(c.master.seconds, c.slave.seconds);
  c.bytes_difference_pct = d(c.master.bytes, c.slave.bytes);
  c.bits_per_s_difference_pct = difference_pct(c.master.bits_per_s(), c.slave.bits_per_s());
  c.ops_difference_pct = d(c.master.ops, c.slave.ops);
  c.errors_difference_pct = d(c.master.error_total(), c.slave.error_total());
}

}  // namespace

std::optional<double> difference_pct(double master, double slave) {
  if (master == 0) {
    if (slave == 0) return 0.0;
    return std::nullopt;
  }
  return (master - slave) / master * 100.0;
}

Totals master_share(const RunReport& report, std::string_view host,
                    const std::vector<std::size_t>* steps, Traffic traffic) {
  const results::RunResult& r = report.master.result;
  const auto take = [&](std::size_t step) {
    return steps == nullptr || std::find(steps->begin(), steps->end(), step) != steps->end();
  };
  if (!has_hosts(report)) return steps ? timed_totals(r, *steps, traffic) : all_totals(r, traffic);
  Totals t;
  for (std::size_t step = 0; step < r.windows.size(); ++step) {
    if (take(step)) t.seconds += window_seconds(r, step);
  }
  for (const SlotName& n : report.slot_names) {
    if (!n.flowop || n.uncorrected || n.handshake || !take(n.txn)) continue;
    if (n.host != host && !(n.host.empty() && group_serves(report, n.group, host))) continue;
    if (n.group >= r.groups.size() || n.txn >= r.groups[n.group].transactions.size()) continue;
    const auto& flowops = r.groups[n.group].transactions[n.txn].flowops;
    if (*n.flowop >= flowops.size()) continue;
    const results::SlotCounters& c = flowops[*n.flowop].stats.counters;
    if (!counts_in(c, traffic)) continue;
    t.ops += c.ops;
    t.bytes_read += c.bytes_read;
    t.bytes_written += c.bytes_written;
    t.bytes += c.bytes();
    t.expired += c.expired;
    for (std::size_t k = 0; k < t.errors.size(); ++k) t.errors[k] += c.errors[k];
  }
  return t;
}

std::optional<std::size_t> peer_flowop(const RunReport& report, std::string_view host,
                                       std::size_t group, std::size_t txn, std::size_t flowop) {
  if (!has_hosts(report)) return flowop;
  // The transaction's flowop slots in flowop order (slot order need not be flowop order).
  std::vector<const SlotName*> slots;
  for (const SlotName& n : report.slot_names) {
    if (n.flowop && !n.uncorrected && !n.handshake && n.group == group && n.txn == txn) {
      slots.push_back(&n);
    }
  }
  std::sort(slots.begin(), slots.end(),
            [](const SlotName* a, const SlotName* b) { return *a->flowop < *b->flowop; });
  std::size_t index = 0;
  for (const SlotName* n : slots) {
    const bool kept = n->host.empty() || n->host == host;
    if (*n->flowop == flowop) return kept ? std::optional<std::size_t>(index) : std::nullopt;
    if (kept) ++index;
  }
  return std::nullopt;
}

results::DatagramCounters peer_datagrams(const RunReport& report, std::size_t g, std::size_t t,
                                         std::size_t f) {
  results::DatagramCounters sum;
  for (const SideReport& s : report.slaves) {
    const auto at = peer_flowop(report, s.host, g, t, f);
    const auto& groups = s.result.groups;
    if (!at || g >= groups.size() || t >= groups[g].transactions.size() ||
        *at >= groups[g].transactions[t].flowops.size()) {
      continue;
    }
    sum.merge(groups[g].transactions[t].flowops[*at].stats.counters.datagrams);
  }
  return sum;
}

SideComparison compare_with_master(const RunReport& report, std::size_t slave) {
  const SideReport& side = report.slaves.at(slave);
  SideComparison c;
  c.host = side.host;
  c.missing = side.missing;
  c.master = master_share(report, side.host, &report.timed_steps);
  if (side.missing.empty()) c.slave = timed_totals(side.result, report.timed_steps);
  fill_differences(c);
  return c;
}

SideComparison compare_master_with_slaves(const RunReport& report) {
  SideComparison c;
  c.master = timed_totals(report.master.result, report.timed_steps);
  std::vector<std::string> missing;
  for (const SideReport& s : report.slaves) {
    if (!s.missing.empty()) {
      missing.push_back(s.host);
      continue;
    }
    const Totals t = timed_totals(s.result, report.timed_steps);
    c.slave.transactions += t.transactions;
    c.slave.ops += t.ops;
    c.slave.bytes += t.bytes;
    c.slave.bytes_read += t.bytes_read;
    c.slave.bytes_written += t.bytes_written;
    c.slave.expired += t.expired;
    for (std::size_t k = 0; k < t.errors.size(); ++k) c.slave.errors[k] += t.errors[k];
    c.slave.seconds = std::max(c.slave.seconds, t.seconds);
  }
  if (!missing.empty()) {
    c.missing = fmt::format("no results from {}", fmt::join(missing, ", "));
  }
  fill_differences(c);
  return c;
}

}  // namespace volley::report
