// The UDP section of the final report: per UDP flowop, what the sending side sent beside what the
// receiving side saw arrive. UDP is counted at the receiver: a sender's count says nothing of
// what the network delivered.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "text_sections.hpp"
#include "volley/report/comparison.hpp"
#include "volley/report/units_format.hpp"

namespace volley::report::detail {
namespace {

std::string jitter_text(std::uint64_t ns) {
  return ns >= 1'000'000 ? fmt::format("{:.2f}ms", static_cast<double>(ns) / 1e6)
                         : fmt::format("{:.1f}us", static_cast<double>(ns) / 1e3);
}

}  // namespace

std::string datagram_section(const RunReport& report) {
  const engine::RunResult& master = report.master.result;
  std::string rows;
  for (std::size_t g = 0; g < master.groups.size(); ++g) {
    for (std::size_t t = 0; t < master.groups[g].transactions.size(); ++t) {
      const auto& txn = master.groups[g].transactions[t];
      for (std::size_t f = 0; f < txn.flowops.size(); ++f) {
        const engine::DatagramCounters& mine = txn.flowops[f].stats.counters.datagrams;
        // Peers found by peer_flowop: a two-host profile's mirrors hold only their host's flowops.
        const engine::DatagramCounters theirs = peer_datagrams(report, g, t, f);
        const bool all_reported = std::all_of(report.slaves.begin(), report.slaves.end(),
                                              [](const SideReport& s) { return s.missing.empty(); });
        if (!mine.any() && !theirs.any()) continue;
        // The sender is the side that sent; the receiver the other one.
        const bool master_sends = mine.sent != 0 || theirs.received != 0;
        const engine::DatagramCounters& sender = master_sends ? mine : theirs;
        const engine::DatagramCounters& receiver = master_sends ? theirs : mine;
        const std::string where = fmt::format("{}/{}/{}", master.groups[g].name,
                                              txn.name.empty() ? fmt::format("txn{}", t) : txn.name,
                                              txn.flowops[f].type);
        if (!all_reported && master_sends) {
          rows += fmt::format("  {:<28} {:>10}  (receiver's counts missing)\n", where, sender.sent);
          continue;
        }
        const std::uint64_t lost =
            sender.sent > receiver.received ? sender.sent - receiver.received : 0;
        const double pct =
            sender.sent == 0 ? 0.0 : 100.0 * static_cast<double>(lost) / static_cast<double>(sender.sent);
        rows += fmt::format("  {:<28} {:>6} {:>10} {:>10} {:>10} {:>6.2f}% {:>7} {:>6} {:>8} {:>9}\n",
                            where, master_sends ? "m->s" : "s->m", sender.sent, receiver.received,
                            lost, pct, receiver.late, receiver.duplicates, receiver.timeouts,
                            jitter_text(receiver.jitter_ns));
      }
    }
  }
  if (rows.empty()) return {};
  return fmt::format(
             "UDP datagrams, all steps (sent by the sender; the rest counted by the receiver)\n"
             "  {:<28} {:>6} {:>10} {:>10} {:>10} {:>7} {:>7} {:>6} {:>8} {:>9}\n",
             "group/transaction/flowop", "way", "sent", "received", "lost", "loss", "late", "dup",
             "timeouts", "jitter") +
         rows;
}

}  // namespace volley::report::detail
