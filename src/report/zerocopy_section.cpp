// The zero-copy section of the final report: each write flowop with zerocopy on every side, its
// zero-copy sends (system calls, not operations: a large write may take several), and what the
// kernel said of them once it was done with their pages: sent from them, or copied anyway, and
// the share it copied.
#include <fmt/format.h>

#include "text_layout.hpp"
#include "text_sections.hpp"

namespace volley::report::detail {
namespace {

constexpr std::size_t kLabel = 24;

/// The line under a flowop's row: the share of its reported sends the kernel copied, and why
/// when it copied them all.
std::string copied_line(const results::ZeroCopyCounters& z) {
  const std::uint64_t reported = z.zero_copied + z.copied;
  if (reported == 0) return "    copied by the kernel: - (no completion came)\n";
  const double pct = 100.0 * static_cast<double>(z.copied) / static_cast<double>(reported);
  std::string why;
  if (z.copied == reported) {
    why =
        " (loopback and devices that cannot gather copy\n      every send: zero-copy "
        "saves nothing there)";
  }
  return fmt::format("    copied by the kernel: {:.0f}%{}\n", pct, why);
}

/// One side's rows: a row per write flowop that made zero-copy sends.
std::string side_rows(const results::RunResult& r) {
  std::string out;
  for (const auto& g : r.groups) {
    for (const results::TxnResult& t : g.transactions) {
      for (std::size_t f = 0; f < t.flowops.size(); ++f) {
        const results::ZeroCopyCounters& z = t.flowops[f].stats.counters.zerocopy;
        if (!z.any()) continue;
        out +=
            labelled_row(fmt::format("  {}/{} {} {}", g.name, t.name, f, t.flowops[f].type), kLabel,
                         fmt::format("{:>14}{:>14}{:>14}{:>13}", fit_count(z.sends, 14),
                                     fit_count(z.zero_copied, 14), fit_count(z.copied, 14),
                                     fit_count(z.unconfirmed(), 13)));
        out += copied_line(z);
      }
    }
  }
  return out;
}

}  // namespace

std::string zerocopy_section(const RunReport& report) {
  std::string body;
  if (std::string rows = side_rows(report.master.result); !rows.empty()) {
    body += "master\n" + rows;
  }
  for (const SideReport& slave : report.slaves) {
    if (std::string rows = side_rows(slave.result); !rows.empty()) {
      body += slave.host + "\n" + rows;
    }
  }
  if (body.empty()) return {};
  return "Zero-copy writes (sends with MSG_ZEROCOPY, and what the kernel said of each\n"
         "once done with its pages; unconfirmed: no word when its connection closed)\n" +
         fmt::format("{:<{}}{:>14}{:>14}{:>14}{:>13}\n", "", kLabel, "Sends", "Zero-copied",
                     "Copied", "Unconfirmed") +
         body;
}

}  // namespace volley::report::detail
