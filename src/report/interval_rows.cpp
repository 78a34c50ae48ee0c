#include "volley/report/interval_rows.hpp"

#include <algorithm>
#include <chrono>

namespace volley::report {
namespace {

bool is_transaction_slot(const SlotName& n) { return !n.flowop && !n.uncorrected; }

bool active(const IntervalTxnRow& row) {
  return row.transactions != 0 || row.ops != 0 || row.bytes != 0 || row.errors != 0 ||
         row.expired != 0 || row.handshakes != 0 || row.datagrams.any() || row.peer_datagrams.any();
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

/// Whether `d` shows anything arriving (or awaited) at its side.
bool receives(const results::DatagramCounters& d) {
  return d.received + d.lost + d.duplicates + d.timeouts != 0;
}

}  // namespace

std::int64_t interval_lost(const results::DatagramCounters& receiver) {
  return static_cast<std::int64_t>(receiver.lost) - static_cast<std::int64_t>(receiver.late);
}

double interval_loss_pct(const results::DatagramCounters& receiver) {
  const std::int64_t accounted =
      static_cast<std::int64_t>(receiver.received) + interval_lost(receiver);
  return accounted <= 0 ? 0.0
                        : 100.0 * static_cast<double>(interval_lost(receiver)) /
                              static_cast<double>(accounted);
}

std::vector<DatagramWay> datagram_ways(const IntervalTxnRow& row) {
  const bool known = row.peers.complete();
  std::string missing;
  if (!known) {
    missing = !row.peers.missing.empty() ? row.peers.missing
              : row.peers.asked == 0     ? std::string("the slaves were not asked")
                                         : std::string("the slaves' counts are missing");
  }
  std::vector<DatagramWay> ways;
  // Master to slave: the master sent; what arrived is the slaves' to say.
  if (row.datagrams.sent != 0 || (known && receives(row.peer_datagrams))) {
    DatagramWay w;
    w.master_sends = true;
    w.sent = row.datagrams.sent;
    if (known) w.receiver = row.peer_datagrams;
    w.missing = missing;
    ways.push_back(std::move(w));
  }
  // Slave to master: what arrived is the master's; what was sent, the slaves'.
  if (receives(row.datagrams) || (known && row.peer_datagrams.sent != 0)) {
    DatagramWay w;
    w.master_sends = false;
    if (known) w.sent = row.peer_datagrams.sent;
    w.receiver = row.datagrams;
    w.missing = missing;
    ways.push_back(std::move(w));
  }
  return ways;
}

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
    row.handshakes = c.handshakes;
    row.resumed = c.resumed;
    row.datagrams = c.datagrams;
    row.peer_datagrams = c.peer_datagrams;
    row.peers = sample.peers;
    row.tcp = c.tcp;
    row.peer_tcp = c.peer_tcp;
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
