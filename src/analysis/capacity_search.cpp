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
    case Metric::kP50Ns: return "p50";
    case Metric::kP99_9Ns: return "p99.9";
    default: return "p99";
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

std::optional<CapacityChange> compare_capacity(const nlohmann::json& base,
                                               const nlohmann::json& next, std::string& why) {
  why.clear();
  const auto* b = base.is_object() && base.contains("search") ? &base.at("search") : nullptr;
  const auto* n = next.is_object() && next.contains("search") ? &next.at("search") : nullptr;
  if (b == nullptr && n == nullptr) return std::nullopt;
  if (b == nullptr || n == nullptr) {
    why = "only one of the two documents is a search: no capacity to compare";
    return std::nullopt;
  }
  const auto number = [](const nlohmann::json& s, const char* key) -> std::optional<double> {
    const auto it = s.find(key);
    if (it == s.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
  };
  CapacityChange c;
  c.variable = b->value("variable", std::string());
  if (c.variable != n->value("variable", std::string())) {
    why = "the two searches vary different variables: no capacity to compare";
    return std::nullopt;
  }
  const auto base_cap = number(*b, "capacity");
  const auto next_cap = number(*n, "capacity");
  if (!base_cap || !next_cap) {
    why = "a search found no capacity (even its low end missed): no capacity to compare";
    return std::nullopt;
  }
  c.base = *base_cap;
  c.next = *next_cap;
  c.change_pct = (c.next - c.base) / c.base * 100.0;
  const auto base_missed = number(*b, "lowest_missed");
  const auto next_missed = number(*n, "lowest_missed");
  if (base_missed && c.next >= *base_missed) {
    c.verdict = CapacityChange::Verdict::kHigher;
  } else if (next_missed && c.base >= *next_missed) {
    c.verdict = CapacityChange::Verdict::kLower;
  }
  const auto bracket = [](double met, const std::optional<double>& missed) {
    return missed ? fmt::format("{:.6g} met, {:.6g} missed", met, *missed)
                  : fmt::format("at least {:.6g}: the top of its range met", met);
  };
  const char* verdict = c.verdict == CapacityChange::Verdict::kHigher ? "higher"
                        : c.verdict == CapacityChange::Verdict::kLower
                            ? "lower"
                            : "within the searches' precision";
  c.text = fmt::format(
      "capacity ({} for {}): {:.6g} -> {:.6g} ({:+.1f}%): {}\n"
      "  base: {}; new: {} (a capacity moved when one search met a load the other missed)\n",
      c.variable, b->value("target", std::string("?")), c.base, c.next, c.change_pct, verdict,
      bracket(c.base, base_missed), bracket(c.next, next_missed));
  return c;
}

std::string CapacitySearch::text(double load) const {
  return range_.integer ? fmt::format("{:.0f}", load) : fmt::format("{:.6g}", load);
}

}  // namespace volley::analysis
