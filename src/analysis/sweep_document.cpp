#include "volley/analysis/sweep_document.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "volley/analysis/run_metrics.hpp"

namespace volley::analysis {
namespace {

using nlohmann::json;

std::string_view spacing_name(ValueSpacing s) {
  switch (s) {
    case ValueSpacing::kGeometric: return "geometric";
    case ValueSpacing::kArithmetic: return "arithmetic";
    case ValueSpacing::kList: break;
  }
  return "list";
}

ValueSpacing spacing_from(const json& j) {
  if (j == "geometric") return ValueSpacing::kGeometric;
  if (j == "arithmetic") return ValueSpacing::kArithmetic;
  return ValueSpacing::kList;
}

/// A run document has a "status" and "totals" object.
bool looks_like_run(const json& doc) {
  return doc.is_object() && doc.contains("status") && doc.contains("totals") &&
         doc["totals"].is_object();
}

SeriesParse fail(std::string message) { return SeriesParse{std::nullopt, std::move(message)}; }

}  // namespace

json value_json(const std::string& text) {
  if (const auto n = to_number(text)) {
    // Keep integers integral in the document ("4", not "4.0").
    if (std::floor(*n) == *n && std::abs(*n) < 9.0e15) return json(static_cast<std::int64_t>(*n));
    return json(*n);
  }
  return json(text);
}

std::string value_text(const json& value) {
  if (value.is_null()) return "(single run)";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
  if (value.is_number()) return fmt::format("{}", value.get<double>());
  return value.dump();
}

json make_sweep_document(const SweepInfo& info, const std::vector<SweepPoint>& points) {
  json doc;
  doc["schema_version"] = kSweepSchemaVersion;
  doc["kind"] = "sweep";
  doc["volley_version"] = info.volley_version;
  json profile = nullptr;
  for (const SweepPoint& p : points) {
    if (!p.runs.empty() && p.runs.front().contains("profile")) {
      profile = p.runs.front()["profile"];
      break;
    }
  }
  doc["profile"] = std::move(profile);
  json values = json::array();
  for (const SweepPoint& p : points) values.push_back(p.value);
  doc["vary"] = json{{"name", info.vary_name},
                     {"values", std::move(values)},
                     {"spacing", spacing_name(info.spacing)}};
  doc["repeat"] = info.repeat;
  doc["system"] = json{{"local", info.system_local}, {"remote", remote_snapshots(points)}};
  json out_points = json::array();
  for (const SweepPoint& p : points) {
    out_points.push_back(
        json{{"value", p.value}, {"runs", p.runs}, {"summary", to_json(summarize_runs(p.runs))}});
  }
  doc["points"] = std::move(out_points);
  return doc;
}

json remote_snapshots(const std::vector<SweepPoint>& points) {
  for (const SweepPoint& p : points) {
    for (const json& run : p.runs) {
      const auto system = run.find("system");
      if (system == run.end() || !system->is_object()) continue;
      const auto remote = system->find("remote");
      if (remote != system->end() && remote->is_array() && !remote->empty()) return *remote;
    }
  }
  return json::array();
}

namespace {

/// Reads `system.local` / `system.remote` of a sweep or run document into `s`.
void read_snapshots(const json& doc, Series& s) {
  const auto system = doc.find("system");
  if (system == doc.end() || !system->is_object()) return;
  if (const auto local = system->find("local"); local != system->end()) s.system_local = *local;
  if (const auto remote = system->find("remote"); remote != system->end() && remote->is_array()) {
    s.system_remote = *remote;
  }
}

}  // namespace

SeriesParse series_from_document(const json& doc) {
  if (!doc.is_object()) return fail("not a volley result document (expected a JSON object)");
  const auto kind = doc.find("kind");
  if (kind == doc.end() || *kind == "merge") {  // a run, or masters merged into one (`merge`)
    if (!looks_like_run(doc)) {
      return fail(
          "not a volley result document (no \"kind\", and no \"status\"/\"totals\" of a run)");
    }
    Series s;
    s.points.push_back(SweepPoint{nullptr, {doc}});
    read_snapshots(doc, s);
    return SeriesParse{std::move(s), {}};
  }
  if (*kind != "sweep") return fail(fmt::format("unknown document kind {}", kind->dump()));
  const auto points = doc.find("points");
  if (points == doc.end() || !points->is_array()) return fail("sweep document without \"points\"");
  Series s;
  ValueSpacing spacing = ValueSpacing::kList;
  if (const auto vary = doc.find("vary"); vary != doc.end() && vary->is_object()) {
    if (vary->contains("name") && (*vary)["name"].is_string()) s.vary_name = (*vary)["name"];
    if (vary->contains("spacing")) spacing = spacing_from((*vary)["spacing"]);
  }
  std::vector<json> values;
  for (const json& p : *points) {
    if (!p.is_object() || !p.contains("value") || !p.contains("runs") || !p["runs"].is_array()) {
      return fail("a sweep point lacks \"value\" or \"runs\"");
    }
    SweepPoint point{p["value"], {}};
    for (const json& run : p["runs"]) {
      if (!looks_like_run(run)) return fail("a sweep point holds something that is not a run");
      point.runs.push_back(run);
    }
    values.push_back(point.value);
    s.points.push_back(std::move(point));
  }
  s.log_x = use_log_axis(values, spacing);
  read_snapshots(doc, s);
  return SeriesParse{std::move(s), {}};
}

bool use_log_axis(const std::vector<json>& values, ValueSpacing spacing) {
  std::vector<double> xs;
  for (const json& v : values) {
    if (!v.is_number() || v.get<double>() <= 0) return false;
    xs.push_back(v.get<double>());
  }
  if (xs.size() < 2) return false;
  if (spacing == ValueSpacing::kGeometric) return true;
  const auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
  if (*hi / *lo >= 100) return true;
  if (xs.size() < 3) return false;
  const double ratio = xs[1] / xs[0];
  if (ratio <= 1.0 + 1e-9) return false;
  for (std::size_t i = 2; i < xs.size(); ++i) {
    if (std::abs(xs[i] / xs[i - 1] - ratio) > 1e-6 * ratio) return false;
  }
  return true;
}

}  // namespace volley::analysis
