#include "volley/analysis/run_metrics.hpp"

#include <cmath>

#include "volley/analysis/statistics.hpp"

namespace volley::analysis {
namespace {

using nlohmann::json;

constexpr std::array<MetricInfo, kMetricCount> kInfos{{
    {"transactions_per_s", "transactions/s", Better::kHigher},
    {"p50_ns", "p50 latency", Better::kLower},
    {"p99_ns", "p99 latency", Better::kLower},
    {"p99_9_ns", "p99.9 latency", Better::kLower},
    {"cpu_busy_pct_local", "CPU busy % master", Better::kNotJudged},
    {"cpu_busy_pct_remote", "CPU busy % slave", Better::kNotJudged},
    {"service_demand_us_per_txn_local", "service demand master (us/txn)", Better::kLower},
    {"service_demand_us_per_txn_remote", "service demand slave (us/txn)", Better::kLower},
    {"errors", "errors", Better::kLower},
}};

/// The number at `path` below `j`, or nullopt.
std::optional<double> number_at(const json& j, std::initializer_list<const char*> path) {
  const json* at = &j;
  for (const char* key : path) {
    if (!at->is_object()) return std::nullopt;
    const auto it = at->find(key);
    if (it == at->end()) return std::nullopt;
    at = &*it;
  }
  if (!at->is_number()) return std::nullopt;
  return at->get<double>();
}

/// Mean of `path` over the entries of the array `list` that have it.
std::optional<double> mean_over(const json& list, std::initializer_list<const char*> path) {
  if (!list.is_array()) return std::nullopt;
  double sum = 0;
  std::size_t n = 0;
  for (const json& side : list) {
    if (auto v = number_at(side, path)) {
      sum += *v;
      ++n;
    }
  }
  if (n == 0) return std::nullopt;
  return sum / static_cast<double>(n);
}

/// The latency block of the timed transaction, or nullptr.
const json* timed_latency(const json& run) {
  const auto steps = run.find("timed_steps");
  const auto groups = run.find("groups");
  if (steps == run.end() || !steps->is_array() || groups == run.end() || !groups->is_array()) {
    return nullptr;
  }
  for (const json& group : *groups) {
    const auto txns = group.find("transactions");
    if (!group.is_object() || txns == group.end() || !txns->is_array()) continue;
    for (const json& txn : *txns) {
      const auto step = txn.find("step");
      const auto latency = txn.find("latency_ns");
      if (step == txn.end() || latency == txn.end()) continue;
      for (const json& timed : *steps) {
        if (timed == *step) return &*latency;
      }
    }
    return nullptr;  // the first group only: its timed transaction is the one reported
  }
  return nullptr;
}

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
json number_or_null(const std::optional<double>& v) {
  return v ? number_or_null(*v) : json(nullptr);
}

}  // namespace

const MetricInfo& info(Metric m) { return kInfos[static_cast<std::size_t>(m)]; }

bool counts(const json& run) {
  const auto status = run.is_object() ? run.find("status") : run.end();
  return run.is_object() && status != run.end() && *status == "ok";
}

RunMetrics run_metrics(const json& run) {
  RunMetrics m;
  if (!run.is_object()) return m;
  m[Metric::kTransactionsPerS] = number_at(run, {"totals", "transactions_per_s"});
  if (const json* latency = timed_latency(run)) {
    m[Metric::kP50Ns] = number_at(*latency, {"p50"});
    m[Metric::kP99Ns] = number_at(*latency, {"p99"});
    m[Metric::kP99_9Ns] = number_at(*latency, {"p99_9"});
  }
  m[Metric::kCpuBusyPctLocal] = number_at(run, {"cpu", "local", "total", "busy_pct"});
  m[Metric::kServiceDemandLocal] =
      number_at(run, {"cpu", "local", "service_demand", "process_us_per_transaction"});
  if (const auto cpu = run.find("cpu"); cpu != run.end() && cpu->is_object()) {
    if (const auto remote = cpu->find("remote"); remote != cpu->end()) {
      m[Metric::kCpuBusyPctRemote] = mean_over(*remote, {"total", "busy_pct"});
      m[Metric::kServiceDemandRemote] =
          mean_over(*remote, {"service_demand", "process_us_per_transaction"});
    }
  }
  m[Metric::kErrors] = number_at(run, {"totals", "errors", "total"});
  return m;
}

std::vector<double> metric_values(const std::vector<RunMetrics>& runs, Metric m) {
  std::vector<double> out;
  for (const RunMetrics& r : runs) {
    if (r[m]) out.push_back(*r[m]);
  }
  return out;
}

PointSummary summarize_runs(const std::vector<json>& runs) {
  std::vector<RunMetrics> counted;
  for (const json& run : runs) {
    if (counts(run)) counted.push_back(run_metrics(run));
  }
  PointSummary s;
  s.n = counted.size();
  const std::vector<double> tps = metric_values(counted, Metric::kTransactionsPerS);
  const Summary tps_summary = summarize(tps);
  const ConfidenceInterval ci = confidence_interval_95(tps);
  s.tps_mean = tps.empty() ? std::nan("") : tps_summary.mean;
  s.tps_stddev = tps.size() < 2 ? std::nan("") : tps_summary.stddev;
  s.tps_ci95_low = ci.low;
  s.tps_ci95_high = ci.high;
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    const std::vector<double> values = metric_values(counted, static_cast<Metric>(i));
    if (!values.empty()) s.means[i] = summarize(values).mean;
  }
  return s;
}

json to_json(const PointSummary& s) {
  json out = json::object();
  out["transactions_per_s"] = json{{"mean", number_or_null(s.tps_mean)},
                                   {"stddev", number_or_null(s.tps_stddev)},
                                   {"ci95_low", number_or_null(s.tps_ci95_low)},
                                   {"ci95_high", number_or_null(s.tps_ci95_high)},
                                   {"n", s.n}};
  for (std::size_t i = 1; i < kMetricCount; ++i) {
    out[std::string(kInfos[i].key)] = number_or_null(s.means[i]);
  }
  return out;
}

}  // namespace volley::analysis
