#include "volley/report/interval_rows.hpp"

#include <algorithm>
#include <chrono>

namespace volley::report {
namespace {

bool is_transaction_slot(const SlotName& n) { return !n.flowop && !n.uncorrected; }

bool active(const IntervalTxnRow& row) {
  return row.transactions != 0 || row.ops != 0 || row.bytes != 0 || row.errors != 0 ||
         row.expired != 0;
}

/// Names from the master's result when it has them; the halves of the slot name otherwise.
void fill_names(const RunReport& report, IntervalTxnRow& row) {
  const std::size_t slash = row.name.find('/');
  row.group_name = row.name.substr(0, slash);
  row.txn_name = slash == std::string::npos ? row.name : row.name.substr(slash + 1);
  const auto& groups = report.master.result.groups;
  if (row.group >= groups.size()) return;
  if (!groups[row.group].name.empty()) row.group_name = groups[row.group].name;
  const auto& txns = groups[row.group].transactions;
  if (row.txn < txns.size() && !txns[row.txn].name.empty()) row.txn_name = txns[row.txn].name;
}

}  // namespace

std::vector<IntervalTxnRow> interval_txn_rows(const RunReport& report,
                                              const IntervalSample& sample) {
  const std::size_t n = std::min(report.slot_names.size(), sample.slots.size());
  const double seconds = std::chrono::duration<double>(sample.length).count();
  std::vector<IntervalTxnRow> rows;
  for (std::size_t i = 0; i < n; ++i) {
    const SlotName& name = report.slot_names[i];
    if (!is_transaction_slot(name)) continue;
    IntervalTxnRow row;
    row.group = name.group;
    row.txn = name.txn;
    row.name = name.name;
    row.transactions = sample.slots[i].counters.ops;
    row.seconds = seconds;
    row.latency = &sample.slots[i].latency;
    for (std::size_t j = 0; j < n; ++j) {
      const SlotName& f = report.slot_names[j];
      if (!f.flowop || f.uncorrected || f.group != name.group || f.txn != name.txn) continue;
      const engine::SlotCounters& c = sample.slots[j].counters;
      row.ops += c.ops;
      row.bytes += c.bytes();
      row.errors += c.error_total();
      row.expired += c.expired;
    }
    if (active(row) || (name.txn == sample.step && is_timed_step(report, name.txn))) {
      fill_names(report, row);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace volley::report
