#include "volley/report/interval_rows.hpp"

#include <algorithm>
#include <chrono>

namespace volley::report {
namespace {

bool is_transaction_slot(const SlotName& n) { return !n.flowop && !n.uncorrected; }

bool active(const IntervalTxnRow& row) {
  return row.transactions != 0 || row.ops != 0 || row.bytes != 0 || row.errors != 0 ||
         row.expired != 0 || row.datagrams.any();
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
  const double seconds = std::chrono::duration<double>(sample.length).count();
  std::vector<IntervalTxnRow> rows;
  std::size_t k = 0;  // index into sample.txns: the transaction slots, in slot order
  for (const SlotName& name : report.slot_names) {
    if (!is_transaction_slot(name)) continue;
    if (k >= sample.txns.size()) break;
    const IntervalTxnCounters& c = sample.txns[k++];
    IntervalTxnRow row;
    row.group = name.group;
    row.txn = name.txn;
    row.name = name.name;
    row.transactions = c.transactions;
    row.ops = c.ops;
    row.bytes = c.bytes;
    row.errors = c.errors;
    row.expired = c.expired;
    row.datagrams = c.datagrams;
    row.seconds = seconds;
    row.latency = c.latency;
    if (active(row) || (name.txn == sample.step && is_timed_step(report, name.txn))) {
      fill_names(report, row);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace volley::report
