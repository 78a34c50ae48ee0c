#pragma once
/// \file
/// The HTML report of a sweep or a comparison: one self-contained page (inline SVG and CSS, no
/// scripts, nothing fetched) with three charts against the swept value: transactions/s with 95%
/// confidence-interval bars, p99 latency, and process CPU µs per transaction on each side; then
/// a table of the points; a comparison's page starts with its verdicts. Each measured point is
/// one `<circle class="point">`. Pure function.
/// Thread: any.

#include <string>
#include <vector>

#include "volley/analysis/compare.hpp"
#include "volley/analysis/sweep_document.hpp"

namespace volley::analysis {

/// One curve: "sweep" for a sweep, "base" and "new" for a comparison.
struct LabeledSeries {
  std::string label;
  Series series;
};

/// The page. The x axis is logarithmic when every series has log_x; values that are not numbers
/// are placed evenly in the order of the first series.
/// With `comparison` (a comparison's page), the charts follow its verdicts: per point a row per
/// metric with base, new, change, p-value and verdict (`<td class="verdict better">`, `worse`,
/// `changed`, `same`, `unknown`), a warning when repeats are too few to judge, and the settings
/// that differed between the two sides' system snapshots.
[[nodiscard]] std::string render_html_report(const std::string& title,
                                             const std::vector<LabeledSeries>& series,
                                             const Comparison* comparison = nullptr);

}  // namespace volley::analysis
