#include "volley/report/run_report.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace volley::report {
namespace {

/// Adds transaction `txn` of barrier step `step` to `totals` (iterations from the transaction
/// slot, everything else from its flowops so nothing is counted twice).
void add_transaction(Totals& totals, const results::TxnResult& txn, Traffic traffic) {
  totals.transactions += txn.stats.counters.ops;
  const results::SlotCounters ops = flowop_counters(txn, traffic);
  totals.ops += ops.ops;
  totals.bytes_read += ops.bytes_read;
  totals.bytes_written += ops.bytes_written;
  totals.bytes += ops.bytes();
  totals.expired += ops.expired;
  for (std::size_t k = 0; k < totals.errors.size(); ++k) totals.errors[k] += ops.errors[k];
  for (const auto& f : txn.flowops) {
    if (!f.handshakes) continue;
    totals.handshakes += f.handshakes->full.counters.ops + f.handshakes->resumed.counters.ops;
    totals.resumed += f.handshakes->resumed.counters.ops;
  }
}

template <typename Pred>
Totals totals_where(const results::RunResult& result, Pred&& take_step,
                    Traffic traffic = Traffic::kAll) {
  Totals totals;
  for (std::size_t step = 0; step < result.windows.size(); ++step) {
    if (take_step(step)) totals.seconds += window_seconds(result, step);
  }
  for (const auto& group : result.groups) {
    for (std::size_t step = 0; step < group.transactions.size(); ++step) {
      if (take_step(step)) add_transaction(totals, group.transactions[step], traffic);
    }
  }
  return totals;
}

}  // namespace

std::string_view to_string(RunStatus s) {
  switch (s) {
    case RunStatus::kOk: return "ok";
    case RunStatus::kFailed: return "failed";
    case RunStatus::kInterrupted: return "interrupted";
  }
  return "failed";
}

std::uint64_t Totals::error_total() const {
  return std::accumulate(errors.begin(), errors.end(), std::uint64_t{0});
}

Totals timed_totals(const results::RunResult& result, const std::vector<std::size_t>& timed_steps,
                    Traffic traffic) {
  return totals_where(
      result,
      [&](std::size_t step) {
        return std::find(timed_steps.begin(), timed_steps.end(), step) != timed_steps.end();
      },
      traffic);
}

Totals all_totals(const results::RunResult& result, Traffic traffic) {
  return totals_where(
      result, [](std::size_t) { return true; }, traffic);
}

double window_seconds(const results::RunResult& result, std::size_t step) {
  if (step >= result.windows.size()) return 0;
  return std::chrono::duration<double>(result.windows[step].elapsed).count();
}

bool counts_in(const results::SlotCounters& flowop, Traffic traffic) {
  return traffic == Traffic::kAll || !flowop.datagrams.any();
}

results::SlotCounters flowop_counters(const results::TxnResult& txn, Traffic traffic) {
  results::SlotCounters sum;
  for (const auto& f : txn.flowops) {
    if (counts_in(f.stats.counters, traffic)) sum.merge(f.stats.counters);
  }
  return sum;
}

std::optional<std::int64_t> timed_start_unix_ns(const RunReport& report) {
  if (report.timed_steps.empty()) return std::nullopt;
  const auto& windows = report.master.result.windows;
  const std::size_t first = report.timed_steps.front();
  if (first >= windows.size() || windows[first].start_unix_ns == 0) return std::nullopt;
  return windows[first].start_unix_ns;
}

std::optional<std::int64_t> start_offset_ns(const RunReport& report) {
  const auto started = timed_start_unix_ns(report);
  if (!report.start_at_unix_ns || !started) return std::nullopt;
  return *started - *report.start_at_unix_ns;
}

namespace {

LatencySummary summary_of(const stats::LatencyHistogram& h) {
  return LatencySummary{h.count(), h.percentile(50), h.percentile(99)};
}

}  // namespace

void summarize_interval(const std::vector<SlotName>& slot_names,
                        const std::vector<results::SlotStats>& slots, IntervalSample& sample) {
  const std::size_t n = std::min(slot_names.size(), slots.size());
  sample.txns.clear();
  stats::LatencyHistogram step_latency;
  // Transaction slots come before their flowop slots in no particular order: index them first.
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> row_of;
  for (std::size_t i = 0; i < n; ++i) {
    const SlotName& name = slot_names[i];
    if (name.flowop || name.uncorrected) continue;
    row_of[{name.group, name.txn}] = sample.txns.size();
    IntervalTxnCounters row;
    row.transactions = slots[i].counters.ops;
    row.latency = summary_of(slots[i].latency);
    if (!slots[i].tcp.empty()) row.tcp = tcp_brief(slots[i].tcp);
    if (name.txn == sample.step) step_latency.merge(slots[i].latency);
    sample.txns.push_back(row);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const SlotName& name = slot_names[i];
    if (!name.flowop || name.uncorrected) continue;
    const auto it = row_of.find({name.group, name.txn});
    if (it == row_of.end()) continue;
    IntervalTxnCounters& row = sample.txns[it->second];
    const results::SlotCounters& c = slots[i].counters;
    if (name.handshake) {  // within its flowop's operations, counted there
      row.handshakes += c.ops;
      if (name.name.ends_with(":resumed")) row.resumed += c.ops;
      continue;
    }
    row.ops += c.ops;
    row.bytes += c.bytes();
    row.errors += c.error_total();
    row.expired += c.expired;
    row.datagrams.merge(c.datagrams);
  }
  sample.txns.shrink_to_fit();
  sample.step_latency = summary_of(step_latency);
}

namespace {

/// The sample's row of transaction (group, txn), or nullptr. sample.txns holds the transaction
/// slots in slot order (summarize_interval).
IntervalTxnCounters* txn_row(const std::vector<SlotName>& slot_names, std::size_t group,
                             std::size_t txn, IntervalSample& sample) {
  std::size_t row = 0;
  for (const SlotName& name : slot_names) {
    if (name.flowop || name.uncorrected) continue;
    if (row >= sample.txns.size()) return nullptr;
    if (name.group == group && name.txn == txn) return &sample.txns[row];
    ++row;
  }
  return nullptr;
}

}  // namespace

bool add_peer_datagrams(const std::vector<SlotName>& slot_names, std::size_t group, std::size_t txn,
                        const results::DatagramCounters& counts, IntervalSample& sample) {
  IntervalTxnCounters* row = txn_row(slot_names, group, txn, sample);
  if (row != nullptr) row->peer_datagrams.merge(counts);
  return row != nullptr;
}

bool add_peer_tcp(const std::vector<SlotName>& slot_names, std::size_t group, std::size_t txn,
                  const stats::TcpSummary& tcp, IntervalSample& sample) {
  IntervalTxnCounters* row = txn_row(slot_names, group, txn, sample);
  if (row != nullptr) row->peer_tcp_parts.merge(tcp);
  return row != nullptr;
}

void settle_peer_tcp(IntervalSample& sample) {
  for (IntervalTxnCounters& row : sample.txns) {
    if (!row.peer_tcp_parts.empty()) row.peer_tcp = tcp_brief(row.peer_tcp_parts);
    row.peer_tcp_parts = stats::TcpSummary{};
  }
}

bool is_timed_step(const RunReport& report, std::size_t step) {
  return std::find(report.timed_steps.begin(), report.timed_steps.end(), step) !=
         report.timed_steps.end();
}

}  // namespace volley::report
