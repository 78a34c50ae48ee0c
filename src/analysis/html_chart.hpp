#pragma once
/// \file
/// The pieces of volley's HTML pages: inline SVG line charts (no scripts, nothing fetched), the
/// page's head and style, and HTML escaping. Each plotted point is one `<circle class="point">`
/// with its value as a tooltip. Pure functions. Thread: any.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace volley::analysis::html {

inline constexpr double kWidth = 640;
inline constexpr double kHeight = 360;
inline constexpr double kLeft = 80;
inline constexpr double kRight = 20;
inline constexpr double kTop = 36;
inline constexpr double kBottom = 56;
inline constexpr std::array<std::string_view, 4> kColors{"#1f77b4", "#d62728", "#2ca02c",
                                                         "#9467bd"};

/// `&`, `<`, `>` and `"` as entities.
[[nodiscard]] std::string escape(std::string_view text);

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
  [[nodiscard]] double pixel(double key) const;
};

/// Step of 1, 2 or 5 times a power of ten giving about `count` intervals over `range`.
[[nodiscard]] double nice_step(double range, int count);
/// A tick's text: shortest form, exponent for very large or small values.
[[nodiscard]] std::string tick_label(double v);
/// A numeric axis over `xs` (any order, not empty): padded, log when `log` (every x > 0), a tick
/// at each value when there are at most 16, else round ticks.
[[nodiscard]] XAxis numeric_axis(std::vector<double> xs, bool log);

/// One chart: a y axis from 0 to above the largest value (error bars included), the lines with
/// their points and error bars, and a legend.
[[nodiscard]] std::string render_chart(const std::string& title, const std::string& x_label,
                                       const std::string& y_label, const XAxis& axis,
                                       const std::vector<Line>& lines);

/// `<!DOCTYPE html>` to the page's `<h1>title</h1>`, with the style every page shares.
[[nodiscard]] std::string page_head(const std::string& title);

}  // namespace volley::analysis::html
