#include "html_chart.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace volley::analysis::html {

std::string escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

double XAxis::pixel(double key) const {
  const double a = log ? std::log10(lo) : lo;
  const double b = log ? std::log10(hi) : hi;
  const double v = log ? std::log10(key) : key;
  const double span = b - a == 0 ? 1 : b - a;
  return kLeft + (v - a) / span * (kWidth - kLeft - kRight);
}

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

XAxis numeric_axis(std::vector<double> xs, bool log) {
  XAxis axis;
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
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

std::string page_head(const std::string& title) {
  return fmt::format(
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
}

}  // namespace volley::analysis::html
