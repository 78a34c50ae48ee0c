#include "volley/analysis/sweep_table.hpp"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "volley/report/units_format.hpp"

namespace volley::analysis {
namespace {

std::string optional_metric(Metric m, const std::optional<double>& v) {
  return v ? format_metric(m, *v) : std::string("n/a");
}

}  // namespace

std::string format_metric(Metric m, double value) {
  if (!std::isfinite(value)) return "n/a";
  switch (m) {
    case Metric::kTransactionsPerS: return report::format_count(value);
    case Metric::kP50Ns:
    case Metric::kP99Ns:
    case Metric::kP99_9Ns: return report::format_ns(value);
    case Metric::kCpuBusyPctLocal:
    case Metric::kCpuBusyPctRemote: return fmt::format("{:.1f}", value);
    case Metric::kServiceDemandLocal:
    case Metric::kServiceDemandRemote: return fmt::format("{:.2f}", value);
    case Metric::kErrors: return fmt::format("{:.0f}", value);
  }
  return fmt::format("{}", value);
}

std::string format_sweep_table(const std::string& vary_name,
                               const std::vector<SweepPoint>& points) {
  std::string out =
      fmt::format("{:>8} {:>4} {:>18} {:>8} {:>8} {:>8} {:>7} {:>7} {:>9} {:>9} {:>6}\n", vary_name,
                  "runs", "txn/s (95% CI)", "p50", "p99", "p99.9", "cpu%-m", "cpu%-s", "us/txn-m",
                  "us/txn-s", "errors");
  std::vector<std::string> few;  // values whose interval rests on too few runs
  for (const SweepPoint& p : points) {
    const PointSummary s = summarize_runs(p.runs);
    if (s.n > 0 && s.n < kRepeatsToJudge) few.push_back(value_text(p.value));
    const std::string ci = std::isfinite(s.tps_ci95_high)
                               ? report::format_count((s.tps_ci95_high - s.tps_ci95_low) / 2.0)
                               : std::string("n/a");
    const std::string tps =
        fmt::format("{} ± {}", format_metric(Metric::kTransactionsPerS, s.tps_mean), ci);
    out += fmt::format(
        "{:>8} {:>4} {:>18} {:>8} {:>8} {:>8} {:>7} {:>7} {:>9} {:>9} {:>6}\n", value_text(p.value),
        fmt::format("{}/{}", s.n, p.runs.size()), tps,
        optional_metric(Metric::kP50Ns, s.mean(Metric::kP50Ns)),
        optional_metric(Metric::kP99Ns, s.mean(Metric::kP99Ns)),
        optional_metric(Metric::kP99_9Ns, s.mean(Metric::kP99_9Ns)),
        optional_metric(Metric::kCpuBusyPctLocal, s.mean(Metric::kCpuBusyPctLocal)),
        optional_metric(Metric::kCpuBusyPctRemote, s.mean(Metric::kCpuBusyPctRemote)),
        optional_metric(Metric::kServiceDemandLocal, s.mean(Metric::kServiceDemandLocal)),
        optional_metric(Metric::kServiceDemandRemote, s.mean(Metric::kServiceDemandRemote)),
        optional_metric(Metric::kErrors, s.mean(Metric::kErrors)));
  }
  out +=
      "runs: counted (status ok) / made; txn/s: mean ± 95% CI half-width across repeats; "
      "latency of the timed transaction, mean across repeats;\n"
      "cpu%: host busy %, -m master, -s slave; us/txn: process CPU µs per transaction "
      "(service demand)\n";
  if (!few.empty()) {
    out += fmt::format(
        "too few repeats to judge at {}={}: fewer than {} counted runs give a wide interval or "
        "none; -n 5 or more gives a usable one\n",
        vary_name, fmt::join(few, ","), kRepeatsToJudge);
  }
  return out;
}

}  // namespace volley::analysis
