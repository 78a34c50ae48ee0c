#include "volley/analysis/compare.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "volley/analysis/statistics.hpp"
#include "volley/analysis/sweep_table.hpp"

namespace volley::analysis {
namespace {

using nlohmann::json;

/// JSON values equal, numbers by numeric value (4 matches 4.0).
bool same_value(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  return a == b;
}

std::vector<RunMetrics> counted_metrics(const SweepPoint& p) {
  std::vector<RunMetrics> out;
  for (const json& run : p.runs) {
    if (counts(run)) out.push_back(run_metrics(run));
  }
  return out;
}

/// Snapshot keys that change from second to second on an idle host (not settings).
bool is_volatile(const std::string& key) { return key.rfind("cpu.cur_freq_khz", 0) == 0; }

bool has_snapshot(const json& s) { return s.is_object() && !s.empty(); }

}  // namespace

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::kBetter: return "better";
    case Verdict::kWorse: return "worse";
    case Verdict::kChanged: return "changed, not judged";
    case Verdict::kNoSignificantChange: return "no significant change";
    case Verdict::kUnknown: break;
  }
  return "unknown";
}

namespace {

/// The comparison of `base` and `next` given the test's result.
MetricComparison judge(Metric m, const std::vector<double>& base, const std::vector<double>& next,
                       const WelchResult& t) {
  MetricComparison c;
  c.metric = m;
  c.base_n = base.size();
  c.new_n = next.size();
  c.base_mean = summarize(base).mean;
  c.new_mean = summarize(next).mean;
  if (c.base_mean != 0)
    c.change_pct = (c.new_mean - c.base_mean) / std::abs(c.base_mean) * 100.0;
  else if (c.new_mean == 0)
    c.change_pct = 0.0;
  if (!t.enough_data) {
    c.verdict = Verdict::kUnknown;
    return c;
  }
  c.p_value = t.p_value;
  c.significant = t.p_value < kSignificanceLevel;
  if (!c.significant || c.new_mean == c.base_mean) {
    c.verdict = Verdict::kNoSignificantChange;
  } else if (info(m).better == Better::kNotJudged) {
    c.verdict = Verdict::kChanged;
  } else {
    const bool higher = c.new_mean > c.base_mean;
    c.verdict = higher == (info(m).better == Better::kHigher) ? Verdict::kBetter : Verdict::kWorse;
  }
  return c;
}

/// The snapshot differences worth showing (settings, not volatile readings), keys prefixed.
void add_differences(const json& base, const json& next, const std::string& prefix,
                     std::vector<sampling::SnapshotDifference>& out) {
  for (auto& d : sampling::diff_snapshots(base, next)) {
    if (is_volatile(d.key)) continue;
    d.key = prefix + d.key;
    out.push_back(std::move(d));
  }
}

}  // namespace

MetricComparison compare_metric(Metric m, const std::vector<double>& base,
                                const std::vector<double>& next) {
  return judge(m, base, next, welch_t_test(base, next));
}

MetricComparison compare_paired_metric(Metric m, const std::vector<double>& base,
                                       const std::vector<double>& next) {
  MetricComparison c = judge(m, base, next, paired_ratio_t_test(base, next));
  c.paired = true;
  return c;
}

Comparison compare_rounds(const SweepPoint& base, const SweepPoint& next, const json& base_snapshot,
                          const json& next_snapshot) {
  Comparison c;
  PointComparison pc{nullptr, {}};
  const std::size_t rounds = std::min(base.runs.size(), next.runs.size());
  for (const Metric m : kComparedMetrics) {
    std::vector<double> bv;
    std::vector<double> nv;
    for (std::size_t i = 0; i < rounds; ++i) {
      if (!counts(base.runs[i]) || !counts(next.runs[i])) continue;
      const auto b = run_metrics(base.runs[i])[m];
      const auto n = run_metrics(next.runs[i])[m];
      if (!b || !n) continue;
      bv.push_back(*b);
      nv.push_back(*n);
    }
    if (bv.empty()) continue;
    c.fewest_repeats = pc.metrics.empty() ? bv.size() : std::min(c.fewest_repeats, bv.size());
    pc.metrics.push_back(compare_paired_metric(m, bv, nv));
  }
  c.points.push_back(std::move(pc));
  c.base_has_snapshot = has_snapshot(base_snapshot);
  c.new_has_snapshot = has_snapshot(next_snapshot);
  if (c.base_has_snapshot && c.new_has_snapshot) {
    add_differences(base_snapshot, next_snapshot, "", c.snapshot_differences);
  }
  return c;
}

Comparison compare_series(const Series& base, const Series& next) {
  Comparison c;
  c.vary_name = !base.vary_name.empty() ? base.vary_name : next.vary_name;
  for (const SweepPoint& b : base.points) {
    const SweepPoint* match = nullptr;
    for (const SweepPoint& n : next.points) {
      if (same_value(b.value, n.value)) {
        match = &n;
        break;
      }
    }
    if (match == nullptr) {
      c.only_in_base.push_back(b.value);
      continue;
    }
    PointComparison pc{b.value, {}};
    const auto base_runs = counted_metrics(b);
    const auto new_runs = counted_metrics(*match);
    const std::size_t fewer = std::min(base_runs.size(), new_runs.size());
    c.fewest_repeats = c.points.empty() ? fewer : std::min(c.fewest_repeats, fewer);
    for (const Metric m : kComparedMetrics) {
      const auto bv = metric_values(base_runs, m);
      const auto nv = metric_values(new_runs, m);
      if (bv.empty() || nv.empty()) continue;
      pc.metrics.push_back(compare_metric(m, bv, nv));
    }
    c.points.push_back(std::move(pc));
  }
  for (const SweepPoint& n : next.points) {
    bool found = false;
    for (const SweepPoint& b : base.points) found = found || same_value(b.value, n.value);
    if (!found) c.only_in_new.push_back(n.value);
  }
  c.base_has_snapshot = has_snapshot(base.system_local);
  c.new_has_snapshot = has_snapshot(next.system_local);
  if (c.base_has_snapshot && c.new_has_snapshot) {
    add_differences(base.system_local, next.system_local, "", c.snapshot_differences);
  }
  // Slaves are matched by position (the profile's remotehost order); their keys say which.
  const std::size_t slaves = std::min(base.system_remote.size(), next.system_remote.size());
  for (std::size_t i = 0; i < slaves; ++i) {
    if (!has_snapshot(base.system_remote[i]) || !has_snapshot(next.system_remote[i])) continue;
    add_differences(base.system_remote[i], next.system_remote[i], fmt::format("slave{}:", i + 1),
                    c.snapshot_differences);
  }
  return c;
}

bool worse_beyond(const Comparison& c, double pct) {
  for (const PointComparison& p : c.points) {
    for (const MetricComparison& m : p.metrics) {
      if (m.verdict == Verdict::kWorse && m.change_pct && std::abs(*m.change_pct) > pct)
        return true;
    }
  }
  return false;
}

json to_json(const Comparison& c) {
  const auto number = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json points = json::array();
  for (const PointComparison& p : c.points) {
    json metrics = json::array();
    for (const MetricComparison& m : p.metrics) {
      metrics.push_back({{"metric", info(m.metric).key},
                         {"base_n", m.base_n},
                         {"new_n", m.new_n},
                         {"base_mean", m.base_mean},
                         {"new_mean", m.new_mean},
                         {"change_pct", number(m.change_pct)},
                         {"p_value", number(m.p_value)},
                         {"significant", m.significant},
                         {"paired", m.paired},
                         {"verdict", to_string(m.verdict)}});
    }
    points.push_back({{"value", p.value}, {"metrics", std::move(metrics)}});
  }
  json differences = json::array();
  for (const auto& d : c.snapshot_differences) {
    differences.push_back(
        {{"key", d.key}, {"base", d.before.value_or(nullptr)}, {"new", d.after.value_or(nullptr)}});
  }
  return {{"points", std::move(points)},
          {"fewest_repeats", c.fewest_repeats},
          {"only_in_base", c.only_in_base},
          {"only_in_new", c.only_in_new},
          {"snapshot_differences", std::move(differences)}};
}

std::string format_comparison(const Comparison& c) {
  std::string out;
  const std::string name = c.vary_name.empty() ? std::string("value") : c.vary_name;
  if (c.points.empty()) out += "no point values in common: nothing to compare\n";
  for (const PointComparison& p : c.points) {
    const bool paired = !p.metrics.empty() && p.metrics.front().paired;
    if (paired) {
      out +=
          fmt::format("interleaved rounds: {} (paired t-test over the rounds)\n", c.fewest_repeats);
    } else {
      out += p.value.is_null() ? std::string("single run\n")
                               : fmt::format("{}={}\n", name, value_text(p.value));
    }
    out += fmt::format("  {:<32} {:>12} {:>12} {:>10}  {:<28} {}\n", "metric", "base", "new",
                       "change", "significance", "verdict");
    for (const MetricComparison& m : p.metrics) {
      const std::string change = m.change_pct ? fmt::format("{:+.1f}%", *m.change_pct) : "n/a";
      const std::string significance =
          m.p_value ? fmt::format("p={:.3f}{}", *m.p_value, m.significant ? " significant" : "")
                    : std::string("not enough repeats to tell");
      out += fmt::format("  {:<32} {:>12} {:>12} {:>10}  {:<28} {}\n", info(m.metric).label,
                         format_metric(m.metric, m.base_mean), format_metric(m.metric, m.new_mean),
                         change, significance, to_string(m.verdict));
    }
  }
  if (!c.points.empty() && c.fewest_repeats < kRepeatsToJudge) {
    out += fmt::format(
        "too few repeats to judge: {} counted run(s) on a side; only large changes show as "
        "significant. Rerun both sides with -n 5 or more (volley sweep -n 5).\n",
        c.fewest_repeats);
  }
  auto list_values = [](const std::vector<json>& values) {
    std::string s;
    for (const json& v : values) s += (s.empty() ? "" : ", ") + value_text(v);
    return s;
  };
  if (!c.only_in_base.empty())
    out += fmt::format("only in BASE: {}={}\n", name, list_values(c.only_in_base));
  if (!c.only_in_new.empty())
    out += fmt::format("only in NEW: {}={}\n", name, list_values(c.only_in_new));
  out += "system snapshot differences (master host; slaveN: keys are the Nth slave's host):\n";
  if (!c.base_has_snapshot) {
    out += "  no snapshot in BASE\n";
  } else if (!c.new_has_snapshot) {
    out += "  no snapshot in NEW\n";
  } else if (c.snapshot_differences.empty()) {
    out += "  no differences\n";
  } else {
    for (const auto& d : c.snapshot_differences) out += "  " + d.to_string() + "\n";
  }
  return out;
}

}  // namespace volley::analysis
