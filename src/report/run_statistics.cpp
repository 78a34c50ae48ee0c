// uperf's "Run Statistics" table, in uperf's column layout so its users (and the wrappers that
// scrape it) find what they know; the figures cover the timed steps and the errors are real.
#include <fmt/format.h>

#include "text_layout.hpp"
#include "text_sections.hpp"
#include "volley/report/comparison.hpp"
#include "volley/report/units_format.hpp"

namespace volley::report::detail {
namespace {

std::string stats_row(std::string_view host, const Totals& t) {
  return fmt::format("{:<15} {:>8}{:>11}{:>13}{:>13}{:>12}\n", host,
                     fmt::format("{:.2f}s", t.seconds), format_bytes(t.bytes),
                     format_bits_per_s(t.bits_per_s()), t.ops, t.error_total());
}

}  // namespace

std::string run_statistics_section(const RunReport& report) {
  std::string out = "Run Statistics\n";
  out += fmt::format("{:<15} {:>8}{:>11}{:>13}{:>13}{:>12}\n", "Hostname", "Time", "Data",
                     "Throughput", "Operations", "Errors");
  out += rule();
  for (const SideReport& s : report.slaves) {
    out += stats_row(s.host, timed_totals(s.result, report.timed_steps));
  }
  out += stats_row("master", timed_totals(report.master.result, report.timed_steps));
  if (report.slaves.empty()) return out + rule();
  out += rule();
  for (std::size_t i = 0; i < report.slaves.size(); ++i) {
    const SideComparison c = compare_with_master(report, i);
    const std::string label = report.slaves.size() == 1
                                  ? std::string("Difference(%)")
                                  : fmt::format("Diff(%) {}", c.host).substr(0, 15);
    out += fmt::format("{:<15} {:>8}{:>11}{:>13}{:>13}{:>12}\n", label,
                       format_pct(c.seconds_difference_pct), format_pct(c.bytes_difference_pct),
                       format_pct(c.bits_per_s_difference_pct), format_pct(c.ops_difference_pct),
                       format_pct(c.errors_difference_pct));
  }
  return out;
}

}  // namespace volley::report::detail
