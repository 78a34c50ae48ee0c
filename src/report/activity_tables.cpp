// The Transactions, Flowops and Flowop latency tables of the final report (master only; the
// slaves' figures are in the JSON document).
#include <fmt/format.h>

#include "text_layout.hpp"
#include "text_sections.hpp"
#include "volley/report/units_format.hpp"

namespace volley::report::detail {
namespace {

constexpr std::size_t kTxnLabel = 12;
constexpr std::size_t kFlowopLabel = 18;

double rate(std::uint64_t n, double seconds) {
  return seconds > 0 ? static_cast<double>(n) / seconds : 0;
}

std::string txn_path(const results::GroupResult& g, const results::TxnResult& t, std::size_t step) {
  return fmt::format("{}/{} (step {})", g.name, t.name, step);
}

}  // namespace

std::string transactions_section(const RunReport& report) {
  const results::RunResult& r = report.master.result;
  if (r.groups.empty()) return {};
  std::string out =
      "Transactions, master (* = timed step; latency per iteration)\n" +
      fmt::format("{:<{}}{:>10}{:>8}{:>10}{:>11}{:>7}{:>7}{:>7}{:>7}\n", "", kTxnLabel,
                  "Iterations", "Txn/s", "Bytes", "Bits/s", "p50", "p99", "p99.9", "Errors");
  for (const auto& g : r.groups) {
    out += fmt::format("{} ({} strand{})\n", g.name, g.strands, g.strands == 1 ? "" : "s");
    for (std::size_t step = 0; step < g.transactions.size(); ++step) {
      const results::TxnResult& t = g.transactions[step];
      const double s = window_seconds(r, step);
      const results::SlotCounters ops = flowop_counters(t);
      const auto& h = t.stats.latency;
      const std::string rest = fmt::format(
          "{:>10}{:>8}{:>10}{:>11}{:>7}{:>7}{:>7}{:>7}", fit_count(t.stats.counters.ops, 10),
          format_count(rate(t.stats.counters.ops, s)), format_bytes(ops.bytes()),
          format_bits_per_s(8.0 * rate(ops.bytes(), s)), format_ns(h.percentile(50)),
          format_ns(h.percentile(99)), format_ns(h.percentile(99.9)),
          fit_count(ops.error_total(), 7));
      const std::string label =
          fmt::format("{}{}", is_timed_step(report, step) ? '*' : ' ', t.name);
      out += labelled_row(label, kTxnLabel, rest);
    }
  }
  return out;
}

std::string flowops_section(const RunReport& report) {
  const results::RunResult& r = report.master.result;
  std::string body;
  for (const auto& g : r.groups) {
    for (std::size_t step = 0; step < g.transactions.size(); ++step) {
      const results::TxnResult& t = g.transactions[step];
      if (t.flowops.empty()) continue;
      const double s = window_seconds(r, step);
      body += txn_path(g, t, step) + "\n";
      for (std::size_t f = 0; f < t.flowops.size(); ++f) {
        const results::SlotCounters& c = t.flowops[f].stats.counters;
        body += labelled_row(fmt::format("  {} {}", f, t.flowops[f].type), kFlowopLabel,
                             fmt::format("{:>12}{:>10}{:>11}{:>10}{:>10}", fit_count(c.ops, 12),
                                         format_count(rate(c.ops, s)), format_bytes(c.bytes()),
                                         fit_count(c.error_total(), 10), fit_count(c.expired, 10)));
      }
    }
  }
  if (body.empty()) return {};
  return "Flowops, master (an operation is one flowop execution)\n" +
         fmt::format("{:<{}}{:>12}{:>10}{:>11}{:>10}{:>10}\n", "", kFlowopLabel, "Ops", "Op/s",
                     "Bytes", "Errors", "Expired") +
         body;
}

std::string flowop_latency_section(const RunReport& report) {
  std::string body;
  for (const auto& g : report.master.result.groups) {
    for (std::size_t step = 0; step < g.transactions.size(); ++step) {
      const results::TxnResult& t = g.transactions[step];
      if (t.flowops.empty()) continue;
      body += txn_path(g, t, step) + "\n";
      for (std::size_t f = 0; f < t.flowops.size(); ++f) {
        const auto& h = t.flowops[f].stats.latency;
        body += labelled_row(
            fmt::format("  {} {}", f, t.flowops[f].type), kFlowopLabel,
            fmt::format("{:>11}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}", fit_count(h.count(), 11),
                        format_ns(h.mean()), format_ns(h.percentile(50)),
                        format_ns(h.percentile(90)), format_ns(h.percentile(99)),
                        format_ns(h.percentile(99.9)), format_ns(h.max())));
      }
    }
  }
  if (body.empty()) return {};
  return "Flowop latency, master (completed operations)\n" +
         fmt::format("{:<{}}{:>11}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}\n", "", kFlowopLabel, "Count",
                     "Mean", "p50", "p90", "p99", "p99.9", "Max") +
         body;
}

}  // namespace volley::report::detail
