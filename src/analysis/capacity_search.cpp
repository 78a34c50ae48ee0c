#include "volley/analysis/capacity_search.hpp"

#include <cmath>

#include <fmt/format.h>

#include "volley/analysis/value_list.hpp"
#include "volley/core/units.hpp"
#include "volley/report/units_format.hpp"

namespace volley::analysis {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

bool is_integer(double v) { return std::floor(v) == v; }

std::string_view percentile_name(Metric m) {
  switch (m) {
    case Metric::kP50Ns:
      return "p50";
    case Metric::kP99_9Ns:
      return "p99.9";
    default:
      return "p99";
  }
}

}  // namespace

TargetParse parse_target(std::string_view text) {
  const auto le = text.find("<=");
  if (le == std::string_view::npos) {
    return {std::nullopt, fmt::format("--target '{}': expected PERCENTILE<=DURATION, e.g. "
                                      "'p99<=500us' (p50, p99 or p99.9)",
                                      text)};
  }
  const std::string_view name = trim(text.substr(0, le));
  LatencyTarget t;
  if (name == "p50") {
    t.percentile = Metric::kP50Ns;
  } else if (name == "p99") {
    t.percentile = Metric::kP99Ns;
  } else if (name == "p99.9") {
    t.percentile = Metric::kP99_9Ns;
  } else {
    return {std::nullopt,
            fmt::format("--target '{}': unknown percentile '{}' (p50, p99 or p99.9)", text, name)};
  }
  const core::DurationParse d = core::parse_duration(trim(text.substr(le + 2)));
  if (!d.value || d.value->count() <= 0) {
    return {std::nullopt, fmt::format("--target '{}': {}", text,
                                      d.error.empty() ? "the bound must be above 0" : d.error)};
  }
  t.max_ns = static_cast<double>(d.value->count());
  t.text = std::string(text);
  return {t, ""};
}

RangeParse parse_search_range(std::string_view text) {
  const auto eq = text.find('=');
  const auto dots = text.find("..");
  if (eq == std::string_view::npos || eq == 0 || dots == std::string_view::npos || dots < eq) {
    return {std::nullopt,
            fmt::format("--vary '{}': expected NAME=LOW..HIGH, e.g. r=100..100000", text)};
  }
  SearchRange r;
  r.name = std::string(text.substr(0, eq));
  const auto low = to_number(text.substr(eq + 1, dots - eq - 1));
  const auto high = to_number(text.substr(dots + 2));
  if (!low || !high || *low <= 0 || *high <= *low) {
    return {std::nullopt, fmt::format("--vary '{}': LOW and HIGH must be numbers with "
                                      "0 < LOW < HIGH",
                                      text)};
  }
  r.low = *low;
  r.high = *high;
  r.integer = is_integer(*low) && is_integer(*high);
  return {r, ""};
}

bool run_meets(const nlohmann::json& run, const LatencyTarget& target, std::string& why) {
  if (!counts(run)) {
    why = fmt::format("the run did not end ok ({})", run.value("status", std::string("?")));
    return false;
  }
  const RunMetrics m = run_metrics(run);
  if (const auto errors = m[Metric::kErrors]; errors && *errors > 0) {
    why = fmt::format("{:.0f} errors", *errors);
    return false;
  }
  const auto value = m[target.percentile];
  if (!value) {
    why = "no latency in its timed transaction";
    return false;
  }
  const std::string_view name = percentile_name(target.percentile);
  const bool met = *value <= target.max_ns;
  why = fmt::format("{} {} {} {}", name, report::format_ns(*value), met ? "<=" : ">",
                    report::format_ns(target.max_ns));
  return met;
}

CapacitySearch::CapacitySearch(SearchRange range, double precision)
    : range_(std::move(range)), precision_(precision) {}

std::optional<double> CapacitySearch::next() const {
  if (!low_tried_) return range_.low;
  if (!met_) return std::nullopt;  // the low end missed: nothing in the range meets
  if (!high_tried_) return range_.high;
  if (!missed_) return std::nullopt;  // the high end met
  const double good = *met_;
  const double bad = *missed_;
  if (range_.integer ? bad - good <= 1 : bad - good <= precision_ * good) return std::nullopt;
  double middle = std::sqrt(good * bad);
  if (range_.integer) {
    middle = std::floor(middle);
    if (middle <= good) middle = good + 1;
  }
  return middle;
}

void CapacitySearch::record(double load, bool met) {
  if (load == range_.low) low_tried_ = true;
  if (load == range_.high) high_tried_ = true;
  // next() tries each load between the highest that met and the lowest that missed, so its
  // outcome moves one end of the bracket and keeps it ordered.
  if (met) {
    met_ = load;
  } else {
    missed_ = load;
  }
}

std::string CapacitySearch::text(double load) const {
  return range_.integer ? fmt::format("{:.0f}", load) : fmt::format("{:.6g}", load);
}

}  // namespace volley::analysis
