#include "volley/analysis/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "html_chart.hpp"
#include "volley/analysis/run_metrics.hpp"
#include "volley/analysis/sweep_table.hpp"

namespace volley::analysis {
namespace {

using nlohmann::json;
using namespace html;

/// Every value of every series, with the key each plots at.
XAxis make_x_axis(const std::vector<LabeledSeries>& series) {
  XAxis axis;
  std::vector<json> values;
  bool log = !series.empty();
  for (const auto& s : series) {
    log = log && s.series.log_x;
    for (const auto& p : s.series.points) {
      if (std::none_of(values.begin(), values.end(), [&](const json& v) { return v == p.value; })) {
        values.push_back(p.value);
      }
      axis.numeric = axis.numeric && p.value.is_number();
    }
  }
  if (!axis.numeric || values.empty()) {
    axis.numeric = false;
    axis.lo = -0.5;
    axis.hi = static_cast<double>(values.size()) - 0.5;
    for (std::size_t i = 0; i < values.size(); ++i) {
      axis.ticks.emplace_back(static_cast<double>(i), value_text(values[i]));
    }
    return axis;
  }
  std::vector<double> xs;
  xs.reserve(values.size());
  for (const json& v : values) xs.push_back(v.get<double>());
  return numeric_axis(std::move(xs), log);
}

/// Where a point value plots on `axis` (its index among the categories when not numeric).
double x_key(const XAxis& axis, const json& value) {
  if (axis.numeric) return value.get<double>();
  for (const auto& [key, label] : axis.ticks) {
    if (label == value_text(value)) return key;
  }
  return 0;
}

/// A line of `metric` means per point (points without it are skipped).
Line metric_line(const XAxis& axis, const LabeledSeries& s, Metric m, std::string name,
                 std::string_view color, bool dashed, bool with_ci) {
  Line line{std::move(name), color, dashed, {}};
  for (const SweepPoint& p : s.series.points) {
    const PointSummary summary = summarize_runs(p.runs);
    const std::optional<double> y =
        m == Metric::kTransactionsPerS && std::isfinite(summary.tps_mean)
            ? std::optional<double>(summary.tps_mean)
            : (m == Metric::kTransactionsPerS ? std::nullopt : summary.mean(m));
    if (!y) continue;
    const double scale = (m == Metric::kP99Ns) ? 1e-3 : 1.0;  // latency in µs
    Datum d{x_key(axis, p.value), *y * scale, std::nullopt, std::nullopt,
            fmt::format("{} {}: {}", line.name, value_text(p.value), format_metric(m, *y))};
    if (with_ci) {
      d.low = summary.tps_ci95_low;
      d.high = summary.tps_ci95_high;
    }
    line.data.push_back(std::move(d));
  }
  return line;
}

std::string points_table(const std::vector<LabeledSeries>& series, const std::string& name) {
  std::string out = fmt::format(
      "<table>\n<tr><th>series</th><th>{}</th><th>runs</th><th>txn/s</th><th>95% CI</th>"
      "<th>p50</th><th>p99</th><th>p99.9</th><th>CPU % master</th><th>CPU % slave</th>"
      "<th>µs/txn master</th><th>µs/txn slave</th><th>errors</th></tr>\n",
      escape(name));
  auto cell = [](Metric m, const std::optional<double>& v) {
    return fmt::format("<td>{}</td>", v ? escape(format_metric(m, *v)) : "n/a");
  };
  for (const auto& s : series) {
    for (const SweepPoint& p : s.series.points) {
      const PointSummary sum = summarize_runs(p.runs);
      const std::string ci =
          std::isfinite(sum.tps_ci95_low)
              ? fmt::format("{} – {}", format_metric(Metric::kTransactionsPerS, sum.tps_ci95_low),
                            format_metric(Metric::kTransactionsPerS, sum.tps_ci95_high))
              : std::string("n/a");
      out +=
          fmt::format("<tr><td>{}</td><td>{}</td><td>{}/{}</td><td>{}</td><td>{}</td>",
                      escape(s.label), escape(value_text(p.value)), sum.n, p.runs.size(),
                      escape(format_metric(Metric::kTransactionsPerS, sum.tps_mean)), escape(ci));
      for (const Metric m :
           {Metric::kP50Ns, Metric::kP99Ns, Metric::kP99_9Ns, Metric::kCpuBusyPctLocal,
            Metric::kCpuBusyPctRemote, Metric::kServiceDemandLocal, Metric::kServiceDemandRemote,
            Metric::kErrors}) {
        out += cell(m, sum.mean(m));
      }
      out += "</tr>\n";
    }
  }
  out += "</table>\n";
  return out;
}

std::string_view verdict_class(Verdict v) {
  switch (v) {
    case Verdict::kBetter: return "better";
    case Verdict::kWorse: return "worse";
    case Verdict::kChanged: return "changed";
    case Verdict::kNoSignificantChange: return "same";
    case Verdict::kUnknown: break;
  }
  return "unknown";
}

/// The comparison's verdicts, point by point, and the settings that differed.
std::string verdicts_section(const Comparison& c, const std::string& name) {
  std::string out = "<h2>Verdicts (NEW against BASE; Welch's t-test, p &lt; 0.05)</h2>\n";
  if (c.points.empty()) out += "<p>No point values in common: nothing to compare.</p>\n";
  if (!c.points.empty() && c.fewest_repeats < kRepeatsToJudge) {
    out += fmt::format(
        "<p class=\"warning\">Too few repeats to judge: {} counted run(s) on a side; only large "
        "changes show as significant. Rerun both sides with -n 5 or more.</p>\n",
        c.fewest_repeats);
  }
  for (const PointComparison& p : c.points) {
    out += fmt::format(
        "<h3>{}</h3>\n<table class=\"verdicts\">\n<tr><th>metric</th><th>base</th>"
        "<th>new</th><th>change</th><th>p</th><th>verdict</th></tr>\n",
        escape(p.value.is_null() ? std::string("single run") : name + "=" + value_text(p.value)));
    for (const MetricComparison& m : p.metrics) {
      out += fmt::format(
          "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
          "<td class=\"verdict {}\">{}</td></tr>\n",
          escape(info(m.metric).label), escape(format_metric(m.metric, m.base_mean)),
          escape(format_metric(m.metric, m.new_mean)),
          m.change_pct ? fmt::format("{:+.1f}%", *m.change_pct) : "n/a",
          m.p_value ? fmt::format("{:.3f}", *m.p_value) : "n/a", verdict_class(m.verdict),
          escape(to_string(m.verdict)));
    }
    out += "</table>\n";
  }
  out += "<h2>Settings that differed (system snapshots)</h2>\n";
  if (!c.base_has_snapshot || !c.new_has_snapshot) {
    out += fmt::format("<p>No snapshot in {}.</p>\n", c.base_has_snapshot ? "NEW" : "BASE");
  } else if (c.snapshot_differences.empty()) {
    out += "<p>No differences.</p>\n";
  } else {
    out += "<ul class=\"differences\">\n";
    for (const auto& d : c.snapshot_differences) out += "<li>" + escape(d.to_string()) + "</li>\n";
    out += "</ul>\n";
  }
  return out;
}

}  // namespace

std::string render_html_report(const std::string& title, const std::vector<LabeledSeries>& series,
                               const Comparison* comparison) {
  const XAxis axis = make_x_axis(series);
  std::string name;
  for (const auto& s : series) {
    if (name.empty()) name = s.series.vary_name;
  }
  if (name.empty()) name = "value";
  std::vector<Line> tps;
  std::vector<Line> p99;
  std::vector<Line> demand;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const LabeledSeries& s = series[i];
    const std::string_view color = kColors[i % kColors.size()];
    tps.push_back(metric_line(axis, s, Metric::kTransactionsPerS, s.label, color, false, true));
    p99.push_back(metric_line(axis, s, Metric::kP99Ns, s.label, color, false, false));
    demand.push_back(metric_line(axis, s, Metric::kServiceDemandLocal, s.label + " master", color,
                                 false, false));
    demand.push_back(
        metric_line(axis, s, Metric::kServiceDemandRemote, s.label + " slave", color, true, false));
  }
  std::string html = page_head(title);
  if (comparison != nullptr) html += verdicts_section(*comparison, name);
  html += render_chart("Transactions per second (mean, 95% CI across repeats)", name,
                       "transactions/s", axis, tps);
  html += render_chart("p99 latency of the timed transaction (mean across repeats)", name,
                       "p99 latency (µs)", axis, p99);
  html += render_chart("CPU per transaction (process µs/txn; solid master, dashed slave)", name,
                       "µs per transaction", axis, demand);
  html += "<h2>Points</h2>\n" + points_table(series, name) + "</body>\n</html>\n";
  return html;
}

}  // namespace volley::analysis
