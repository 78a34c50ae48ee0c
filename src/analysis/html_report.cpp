#include "volley/analysis/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "volley/analysis/run_metrics.hpp"
#include "volley/analysis/sweep_table.hpp"

namespace volley::analysis {
namespace {

using nlohmann::json;

constexpr double kWidth = 640;
constexpr double kHeight = 360;
constexpr double kLeft = 80;
constexpr double kRight = 20;
constexpr double kTop = 36;
constexpr double kBottom = 56;
constexpr std::array<std::string_view, 4> kColors{"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};

std::string escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

/// A plotted point: x position key, y value, optional error bar.
struct Datum {
  double x = 0;
  double y = 0;
  std::optional<double> low;
  std::optional<double> high;
  std::string label;  ///< tooltip
};

/// One line of a chart.
struct Line {
  std::string name;
  std::string_view color;
  bool dashed = false;
  std::vector<Datum> data;
};

/// Maps values to pixels along x: numeric (linear or log) or categorical (index).
struct XAxis {
  bool numeric = true;
  bool log = false;
  double lo = 0;
  double hi = 1;
  std::vector<std::pair<double, std::string>> ticks;  ///< key, label
  [[nodiscard]] double pixel(double key) const {
    const double a = log ? std::log10(lo) : lo;
    const double b = log ? std::log10(hi) : hi;
    const double v = log ? std::log10(key) : key;
    const double span = b - a == 0 ? 1 : b - a;
    return kLeft + (v - a) / span * (kWidth - kLeft - kRight);
  }
};

/// Step of 1, 2 or 5 times a power of ten giving about `count` intervals over `range`.
double nice_step(double range, int count) {
  if (!(range > 0)) return 1;
  const double raw = range / count;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

std::string tick_label(double v) {
  if (v != 0 && (std::abs(v) >= 1e6 || std::abs(v) < 1e-3)) return fmt::format("{:.3g}", v);
  return fmt::format("{}", std::round(v * 1000) / 1000);
}

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
  for (const json& v : values) xs.push_back(v.get<double>());
  std::sort(xs.begin(), xs.end());
  axis.log = log;
  if (log) {
    axis.lo = xs.front() / 1.3;
    axis.hi = xs.back() * 1.3;
  } else {
    const double pad = xs.back() == xs.front() ? 1 : (xs.back() - xs.front()) * 0.05;
    axis.lo = xs.front() - pad;
    axis.hi = xs.back() + pad;
  }
  if (xs.size() <= 16) {
    for (const double x : xs) axis.ticks.emplace_back(x, tick_label(x));
  } else if (log) {
    for (double t = std::pow(10.0, std::ceil(std::log10(axis.lo))); t <= axis.hi; t *= 10) {
      axis.ticks.emplace_back(t, tick_label(t));
    }
  } else {
    const double step = nice_step(axis.hi - axis.lo, 8);
    for (double t = std::ceil(axis.lo / step) * step; t <= axis.hi; t += step) {
      axis.ticks.emplace_back(t, tick_label(t));
    }
  }
  return axis;
}

/// Where a point value plots on `axis` (its index among the categories when not numeric).
double x_key(const XAxis& axis, const json& value) {
  if (axis.numeric) return value.get<double>();
  for (const auto& [key, label] : axis.ticks) {
    if (label == value_text(value)) return key;
  }
  return 0;
}

std::string render_chart(const std::string& title, const std::string& x_label,
                         const std::string& y_label, const XAxis& axis,
                         const std::vector<Line>& lines) {
  double y_max = 0;
  for (const Line& l : lines) {
    for (const Datum& d : l.data) y_max = std::max({y_max, d.y, d.high.value_or(0)});
  }
  const double step = nice_step(y_max > 0 ? y_max * 1.05 : 1, 5);
  const double y_top = std::max(step, std::ceil(y_max * 1.05 / step) * step);
  const double plot_h = kHeight - kTop - kBottom;
  // Clamped to the plot: a wide interval's low end can be below 0, which no rate can be.
  auto y_pixel = [&](double v) {
    return kTop + plot_h - std::clamp(v, 0.0, y_top) / y_top * plot_h;
  };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\" aria-label=\"{2}\">\n"
      "<text x=\"{3}\" y=\"20\" class=\"title\">{2}</text>\n",
      kWidth, kHeight, escape(title), kLeft);
  // Grid and y ticks.
  for (double t = 0; t <= y_top + step / 2; t += step) {
    svg += fmt::format(
        "<line class=\"grid\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"/>"
        "<text class=\"ytick\" x=\"{}\" y=\"{:.1f}\">{}</text>\n",
        kLeft, y_pixel(t), kWidth - kRight, y_pixel(t), kLeft - 6, y_pixel(t) + 4,
        escape(tick_label(t)));
  }
  for (const auto& [key, label] : axis.ticks) {
    const double x = axis.pixel(key);
    svg += fmt::format(
        "<line class=\"tick\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>"
        "<text class=\"xtick\" x=\"{0:.1f}\" y=\"{3}\">{4}</text>\n",
        x, kTop + plot_h, kTop + plot_h + 5, kTop + plot_h + 18, escape(label));
  }
  svg += fmt::format(
      "<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>"
      "<line class=\"axis\" x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\"/>\n",
      kLeft, kTop, kTop + plot_h, kWidth - kRight);
  svg += fmt::format("<text class=\"xlabel\" x=\"{:.1f}\" y=\"{}\">{}{}</text>\n",
                     (kLeft + kWidth - kRight) / 2, kHeight - 10, escape(x_label),
                     axis.log ? " (log scale)" : "");
  svg += fmt::format(
      "<text class=\"ylabel\" transform=\"translate(16 {:.1f}) rotate(-90)\">{}</text>\n",
      kTop + plot_h / 2, escape(y_label));
  // Lines, error bars, points, legend.
  double legend_y = kTop + 6;
  for (const Line& l : lines) {
    std::string path;
    for (const Datum& d : l.data) {
      path +=
          fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", axis.pixel(d.x), y_pixel(d.y));
    }
    svg +=
        fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n",
                    l.color, l.dashed ? " stroke-dasharray=\"6 4\"" : "", path);
    for (const Datum& d : l.data) {
      const double x = axis.pixel(d.x);
      if (d.low && d.high && std::isfinite(*d.low) && std::isfinite(*d.high)) {
        svg += fmt::format(
            "<path class=\"ci\" stroke=\"{}\" "
            "d=\"M{:.1f},{:.1f}V{:.1f}M{:.1f},{:.1f}h10M{:.1f},{:.1f}h10\"/>\n",
            l.color, x, y_pixel(*d.low), y_pixel(*d.high), x - 5, y_pixel(*d.low), x - 5,
            y_pixel(*d.high));
      }
      svg += fmt::format(
          "<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\">"
          "<title>{}</title></circle>\n",
          x, y_pixel(d.y), l.color, escape(d.label));
    }
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{3}\" "
        "stroke-width=\"2\"{4}/><text class=\"legend\" x=\"{5}\" y=\"{6:.1f}\">{7}</text>\n",
        kWidth - kRight - 150, legend_y, kWidth - kRight - 126, l.color,
        l.dashed ? " stroke-dasharray=\"6 4\"" : "", kWidth - kRight - 120, legend_y + 4,
        escape(l.name));
    legend_y += 16;
  }
  svg += "</svg>\n";
  return svg;
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
    case Verdict::kBetter:
      return "better";
    case Verdict::kWorse:
      return "worse";
    case Verdict::kChanged:
      return "changed";
    case Verdict::kNoSignificantChange:
      return "same";
    case Verdict::kUnknown:
      break;
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
    out += fmt::format("<h3>{}</h3>\n<table class=\"verdicts\">\n<tr><th>metric</th><th>base</th>"
                       "<th>new</th><th>change</th><th>p</th><th>verdict</th></tr>\n",
                       escape(p.value.is_null() ? std::string("single run")
                                                : name + "=" + value_text(p.value)));
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
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{0}</title>\n"
      "<style>\n"
      "body {{ font-family: sans-serif; margin: 2em; color: #222; }}\n"
      "svg {{ display: block; margin: 1em 0; background: #fff; border: 1px solid #ddd; }}\n"
      "svg text {{ font-size: 12px; fill: #333; }}\n"
      "svg .title {{ font-size: 14px; font-weight: bold; }}\n"
      "svg .ytick {{ text-anchor: end; }} svg .xtick, svg .xlabel, svg .ylabel {{ text-anchor: "
      "middle; }}\n"
      "svg .grid {{ stroke: #eee; }} svg .axis, svg .tick {{ stroke: #555; }}\n"
      "svg .ci {{ fill: none; stroke-width: 1.5; }}\n"
      "table {{ border-collapse: collapse; font-size: 13px; }}\n"
      "td, th {{ border: 1px solid #ccc; padding: 3px 8px; text-align: right; }}\n"
      ".verdict.better {{ background: #d9f2d9; }} .verdict.worse {{ background: #f8d7d7; }}\n"
      ".verdict.changed {{ background: #fff3cd; }} .warning {{ color: #8a4b00; }}\n"
      "</style>\n</head>\n<body>\n<h1>{0}</h1>\n",
      escape(title));
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
