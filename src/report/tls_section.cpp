// The TLS section of the final report: each TLS connect's and accept's handshakes on every side,
// full and resumed, their rate and latency (the handshake alone: the connect's latency in the
// tables above is TCP's connect and the handshake together), and what they negotiated.
#include <fmt/format.h>

#include "text_layout.hpp"
#include "text_sections.hpp"
#include "volley/report/units_format.hpp"

namespace volley::report::detail {
namespace {

constexpr std::size_t kLabel = 24;

double rate(std::uint64_t n, double seconds) {
  return seconds > 0 ? static_cast<double>(n) / seconds : 0;
}

/// One side's rows: a row per TLS flowop, then what it negotiated.
std::string side_rows(const results::RunResult& r) {
  std::string out;
  for (const auto& g : r.groups) {
    for (std::size_t step = 0; step < g.transactions.size(); ++step) {
      const results::TxnResult& t = g.transactions[step];
      for (std::size_t f = 0; f < t.flowops.size(); ++f) {
        const auto& h = t.flowops[f].handshakes;
        if (!h) continue;
        results::SlotStats both = h->full;
        both.merge(h->resumed);
        const double s = window_seconds(r, step);
        out += labelled_row(
            fmt::format("  {}/{} {} {}", g.name, t.name, f, t.flowops[f].type), kLabel,
            fmt::format("{:>10}{:>10}{:>8}{:>10}{:>10}{:>8}", fit_count(h->full.counters.ops, 10),
                        fit_count(h->resumed.counters.ops, 10),
                        format_count(rate(both.counters.ops, s)),
                        format_ns(h->full.latency.percentile(50)),
                        format_ns(h->resumed.latency.percentile(50)),
                        format_ns(both.latency.percentile(99))));
        if (!both.tls.empty()) out += fmt::format("    negotiated: {}\n", both.tls);
      }
    }
  }
  return out;
}

}  // namespace

std::string tls_section(const RunReport& report) {
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
  return "TLS handshakes (the handshake alone; a connect's or accept's latency above includes "
         "it)\n" +
         fmt::format("{:<{}}{:>10}{:>10}{:>8}{:>10}{:>10}{:>8}\n", "", kLabel, "Full", "Resumed",
                     "Hs/s", "p50 full", "p50 res", "p99") +
         body;
}

}  // namespace volley::report::detail
