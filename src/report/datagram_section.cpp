// The UDP section of the final report: per UDP flowop, what the sending side sent beside what the
// receiving side saw arrive. UDP is counted at the receiver: a sender's count says nothing of
// what the network delivered.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "text_sections.hpp"
#include "volley/report/comparison.hpp"
#include "volley/report/interval_rows.hpp"
#include "volley/report/units_format.hpp"

namespace volley::report::detail {
namespace {

std::string jitter_text(std::uint64_t ns) {
  return ns >= 1'000'000 ? fmt::format("{:.2f}ms", static_cast<double>(ns) / 1e6)
                         : fmt::format("{:.1f}us", static_cast<double>(ns) / 1e3);
}

/// One transaction and direction over the intervals: the spread of the receiver's loss per
/// interval, and how many intervals lacked the receiver's counts.
struct WaySpread {
  std::size_t counted = 0;
  std::size_t missing = 0;
  double min_pct = 0;
  double max_pct = 0;
  std::uint64_t max_jitter_ns = 0;
};

/// The per-interval lines: the receiver's loss in the worst and the best interval, so a burst
/// of loss the whole-run figure averages away is seen.
std::string interval_rows_text(const RunReport& report) {
  std::map<std::pair<std::string, std::string>, WaySpread> spreads;  // (txn name, way)
  std::vector<std::pair<std::string, std::string>> order;
  for (const IntervalSample& sample : report.intervals) {
    for (const IntervalTxnRow& row : interval_txn_rows(report, sample)) {
      for (const DatagramWay& w : datagram_ways(row)) {
        const auto key = std::make_pair(row.group_name + "/" + row.txn_name, std::string(w.way()));
        const auto [it, added] = spreads.try_emplace(key);
        if (added) order.push_back(key);
        WaySpread& spread = it->second;
        if (!w.receiver) {
          ++spread.missing;
          continue;
        }
        const double pct = interval_loss_pct(*w.receiver);
        spread.min_pct = spread.counted == 0 ? pct : std::min(spread.min_pct, pct);
        spread.max_pct = spread.counted == 0 ? pct : std::max(spread.max_pct, pct);
        spread.max_jitter_ns = std::max(spread.max_jitter_ns, w.receiver->jitter_ns);
        ++spread.counted;
      }
    }
  }
  std::string rows;
  for (const auto& key : order) {
    const WaySpread& s = spreads.at(key);
    if (s.counted == 0) {
      rows += fmt::format("  {:<24} {:>6} {:>9}  (the receiver's counts are missing)\n", key.first,
                          key.second, s.missing);
      continue;
    }
    rows +=
        fmt::format("  {:<24} {:>6} {:>9} {:>7} {:>7.2f}% {:>7.2f}% {:>9}\n", key.first, key.second,
                    s.counted, s.missing, s.min_pct, s.max_pct, jitter_text(s.max_jitter_ns));
  }
  if (rows.empty()) return {};
  return fmt::format(
             "  per interval (the receiver's loss: gaps it found minus late arrivals, over the\n"
             "  datagrams it accounted for; in the best and the worst interval)\n"
             "  {:<24} {:>6} {:>9} {:>7} {:>8} {:>8} {:>9}\n",
             "group/transaction", "way", "intervals", "missing", "min", "max", "jitter") +
         rows;
}

}  // namespace

std::string datagram_section(const RunReport& report) {
  const results::RunResult& master = report.master.result;
  std::string rows;
  for (std::size_t g = 0; g < master.groups.size(); ++g) {
    for (std::size_t t = 0; t < master.groups[g].transactions.size(); ++t) {
      const auto& txn = master.groups[g].transactions[t];
      for (std::size_t f = 0; f < txn.flowops.size(); ++f) {
        const results::DatagramCounters& mine = txn.flowops[f].stats.counters.datagrams;
        // Peers found by peer_flowop: a two-host profile's mirrors hold only their host's flowops.
        const results::DatagramCounters theirs = peer_datagrams(report, g, t, f);
        const bool all_reported =
            std::all_of(report.slaves.begin(), report.slaves.end(),
                        [](const SideReport& s) { return s.missing.empty(); });
        if (!mine.any() && !theirs.any()) continue;
        // The sender is the side that sent; the receiver the other one.
        const bool master_sends = mine.sent != 0 || theirs.received != 0;
        const results::DatagramCounters& sender = master_sends ? mine : theirs;
        const results::DatagramCounters& receiver = master_sends ? theirs : mine;
        const std::string where =
            fmt::format("{}/{}/{}", master.groups[g].name,
                        txn.name.empty() ? fmt::format("txn{}", t) : txn.name, txn.flowops[f].type);
        if (!all_reported && master_sends) {
          rows += fmt::format("  {:<28} {:>10}  (receiver's counts missing)\n", where, sender.sent);
          continue;
        }
        const std::uint64_t lost =
            sender.sent > receiver.received ? sender.sent - receiver.received : 0;
        const double pct =
            sender.sent == 0 ? 0.0
                             : 100.0 * static_cast<double>(lost) / static_cast<double>(sender.sent);
        rows += fmt::format(
            "  {:<28} {:>6} {:>10} {:>10} {:>10} {:>6.2f}% {:>7} {:>6} {:>8} {:>9}\n", where,
            master_sends ? "m->s" : "s->m", sender.sent, receiver.received, lost, pct,
            receiver.late, receiver.duplicates, receiver.timeouts, jitter_text(receiver.jitter_ns));
      }
    }
  }
  if (rows.empty()) return {};
  return fmt::format(
             "UDP datagrams, all steps (sent by the sender; the rest counted by the receiver)\n"
             "  {:<28} {:>6} {:>10} {:>10} {:>10} {:>7} {:>7} {:>6} {:>8} {:>9}\n",
             "group/transaction/flowop", "way", "sent", "received", "lost", "loss", "late", "dup",
             "timeouts", "jitter") +
         rows + interval_rows_text(report);
}

}  // namespace volley::report::detail
