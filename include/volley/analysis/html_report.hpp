#pragma once
/// \file
/// The HTML report of a sweep or a comparison: one self-contained page (inline SVG and CSS, no
/// scripts, nothing fetched) with three charts against the swept value: transactions/s with 95%
/// confidence-interval bars, p99 latency, and process CPU µs per transaction on each side; then
/// a table of the points. Each measured point is one `<circle class="point">`. Pure function.
/// Thread: any.

#include <string>
#include <vector>

#include "volley/analysis/sweep_document.hpp"

namespace volley::analysis {

/// One curve: "sweep" for a sweep, "base" and "new" for a comparison.
struct LabeledSeries {
  std::string label;
  Series series;
};

/// The page. The x axis is logarithmic when every series has log_x; values that are not numbers
/// are placed evenly in the order of the first series.
[[nodiscard]] std::string render_html_report(const std::string& title,
                                             const std::vector<LabeledSeries>& series);

}  // namespace volley::analysis
