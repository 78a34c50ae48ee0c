// uperf's "Run Statistics" table, in uperf's column layout so its users (and the wrappers that
// scrape it) find what they know; the figures cover the timed steps and the errors are real.
// Host names are never cut: the first column widens to the longest label.
#include <fmt/format.h>

#include <algorithm>

#include "text_layout.hpp"
#include "text_sections.hpp"
#include "volley/report/comparison.hpp"
#include "volley/report/result_checks.hpp"
#include "volley/report/units_format.hpp"

namespace volley::report::detail {
namespace {

constexpr std::size_t kMinLabel = 15;
constexpr std::string_view kSlaveSum = "slaves (sum)";

std::string stats_row(std::string_view label, std::size_t width, const Totals& t) {
  return fmt::format("{:<{}} {:>8}{:>11}{:>13}{:>13}{:>12}\n", label, width,
                     fmt::format("{:.2f}s", t.seconds), format_bytes(t.bytes),
                     format_bits_per_s(t.bits_per_s()), t.ops, t.error_total());
}

std::string difference_row(std::string_view label, std::size_t width, const SideComparison& c) {
  return fmt::format("{:<{}} {:>8}{:>11}{:>13}{:>13}{:>12}\n", label, width,
                     format_pct(c.seconds_difference_pct), format_pct(c.bytes_difference_pct),
                     format_pct(c.bits_per_s_difference_pct), format_pct(c.ops_difference_pct),
                     format_pct(c.errors_difference_pct));
}

std::string per_slave_label(const SideReport& s) { return "Diff(%) " + s.host; }

}  // namespace

std::string run_statistics_section(const RunReport& report) {
  const bool several = report.slaves.size() > 1;
  std::size_t width = kMinLabel;
  for (const SideReport& s : report.slaves) {
    width = std::max(width, (several ? per_slave_label(s) : s.host).size());
  }
  const std::size_t rule_width = std::max<std::size_t>(79, width + 58);
  std::string out = "Run Statistics\n";
  out += fmt::format("{:<{}} {:>8}{:>11}{:>13}{:>13}{:>12}\n", "Hostname", width, "Time", "Data",
                     "Throughput", "Operations", "Errors");
  out += rule(rule_width);
  for (const SideReport& s : report.slaves) {
    if (s.missing.empty()) {
      out += stats_row(s.host, width, timed_totals(s.result, report.timed_steps));
    } else {
      out += fmt::format("{:<{}} missing: {}\n", s.host, width, s.missing);
    }
  }
  const SideComparison sum = compare_master_with_slaves(report);
  if (several && sum.missing.empty()) out += stats_row(kSlaveSum, width, sum.slave);
  out += stats_row("master", width, timed_totals(report.master.result, report.timed_steps));
  if (report.slaves.empty()) return out + rule(rule_width);
  out += rule(rule_width);
  out += difference_row("Difference(%)", width, sum);
  if (const std::string failed = failed_operations_by_kind(report); !failed.empty()) {
    // The Errors column counts operations that failed; they are not in Operations, so a
    // difference there is read with them (by kind in the header's "failed operations").
    out +=
        "  (Errors: failed operations, not counted in Operations; by side and kind in the\n"
        "  header's \"failed operations\")\n";
  }
  if (!sum.missing.empty()) {
    out += fmt::format("  (no comparison: {})\n", sum.missing);
  } else if (several) {
    out += "  (the master against the sum of its slaves)\n";
  }
  if (!several) return out;
  for (std::size_t i = 0; i < report.slaves.size(); ++i) {
    out += difference_row(per_slave_label(report.slaves[i]), width, compare_with_master(report, i));
  }
  out += "  (Diff(%) HOST: that slave against the master's traffic with it)\n";
  return out;
}

}  // namespace volley::report::detail
