// `volley compare BASE NEW`: reads two result documents (sweeps or single runs), prints the
// comparison and optionally the HTML report with both series.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "volley/analysis/capacity_search.hpp"
#include "volley/analysis/compare.hpp"
#include "volley/analysis/html_report.hpp"
#include "volley/analysis/sweep_document.hpp"
#include "volley/cli/commands.hpp"
#include "volley/core/exit_code.hpp"

namespace volley::cli {
namespace {

/// The series in `path` (and the document, into `doc`), or an error sentence naming the file.
analysis::SeriesParse read_series(const std::string& path, nlohmann::json& doc) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {std::nullopt, fmt::format("cannot read '{}': {}", path, std::strerror(errno))};
  std::ostringstream text;
  text << in.rdbuf();
  doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded()) return {std::nullopt, fmt::format("'{}' is not JSON", path)};
  analysis::SeriesParse parsed = analysis::series_from_document(doc);
  if (!parsed.series) parsed.error = fmt::format("'{}': {}", path, parsed.error);
  return parsed;
}

}  // namespace

int compare_command(const CompareOptions& options) {
  nlohmann::json base_doc;
  nlohmann::json next_doc;
  const analysis::SeriesParse base = read_series(options.base, base_doc);
  if (!base.series) {
    std::cerr << "volley: " << base.error << "\n";
    return core::to_int(core::ExitCode::kBadInput);
  }
  const analysis::SeriesParse next = read_series(options.next, next_doc);
  if (!next.series) {
    std::cerr << "volley: " << next.error << "\n";
    return core::to_int(core::ExitCode::kBadInput);
  }
  const analysis::Comparison comparison = analysis::compare_series(*base.series, *next.series);
  std::cout << fmt::format("volley compare: BASE {} vs NEW {}\n", options.base, options.next);
  // Two searches: how their capacity moved, before the loads they have in common.
  std::string why;
  const auto capacity = analysis::compare_capacity(base_doc, next_doc, why);
  if (capacity) std::cout << capacity->text;
  if (!why.empty()) std::cout << why << "\n";
  std::cout << analysis::format_comparison(comparison) << std::flush;
  bool outputs_ok = true;
  if (!options.html.empty()) {
    const std::string html = analysis::render_html_report(
        fmt::format("volley compare: {} (base) vs {} (new)", options.base, options.next),
        {analysis::LabeledSeries{"base", *base.series},
         analysis::LabeledSeries{"new", *next.series}},
        &comparison);
    std::ofstream out(options.html, std::ios::binary | std::ios::trunc);
    out << html;
    out.flush();
    if (!out) {
      std::cerr << fmt::format("volley: cannot write '{}'\n", options.html);
      outputs_ok = false;
    }
  }
  const bool capacity_worse = capacity && options.fail_if_worse &&
                              capacity->verdict == analysis::CapacityChange::Verdict::kLower &&
                              -capacity->change_pct > *options.fail_if_worse;
  if (options.fail_if_worse &&
      (capacity_worse || analysis::worse_beyond(comparison, *options.fail_if_worse))) {
    std::cout << fmt::format("a metric is significantly worse by more than {}%: failing\n",
                             *options.fail_if_worse);
    return core::to_int(core::ExitCode::kRunFailed);
  }
  return core::to_int(outputs_ok ? core::ExitCode::kOk : core::ExitCode::kRunFailed);
}

}  // namespace volley::cli
