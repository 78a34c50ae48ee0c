#pragma once
/// \file
/// The JSON document of a sweep (`volley sweep --json`), and reading one back, or a single run
/// document (`volley run --json`), as a series of points for comparisons and charts.
///
/// Layout (schema_version 1):
/// {
///   "schema_version": 1, "kind": "sweep", "volley_version": str,
///   "profile": {"name", "path", "sha256", "variables"} (from the first run),
///   "vary": {"name": str, "values": [number|str], "spacing": "list"|"geometric"|"arithmetic"},
///   "repeat": int,
///   "system": {"local": snapshot (sampling::read_system_snapshot), "remote": null,
///              "remote_note": str},
///   "points": [{"value": number|str, "runs": [run document...], "summary": {...}}]
/// }
/// Thread: any (pure functions).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "volley/analysis/value_list.hpp"

namespace volley::analysis {

inline constexpr int kSweepSchemaVersion = 1;

/// One value of the swept variable and every run made with it.
struct SweepPoint {
  nlohmann::json value;              ///< number or string; null for a single run document
  std::vector<nlohmann::json> runs;  ///< run documents (report::to_json_document)
};

/// What a sweep document says besides its points.
struct SweepInfo {
  std::string volley_version;
  std::string vary_name;
  ValueSpacing spacing = ValueSpacing::kList;
  std::size_t repeat = 1;
  nlohmann::json system_local;  ///< the snapshot of the master's host
};

/// The slaves' snapshots of a sweep: those its first run carries (`system.remote`), as the
/// slaves do not change during a sweep. An empty array when no run has one.
[[nodiscard]] nlohmann::json remote_snapshots(const std::vector<SweepPoint>& points);

/// A value as the document holds it: a number when the text is one, else the text.
[[nodiscard]] nlohmann::json value_json(const std::string& text);

/// "12", "1.5", or the string itself; "(single run)" for null.
[[nodiscard]] std::string value_text(const nlohmann::json& value);

/// The whole document; each point gets its summary (run_metrics.hpp).
[[nodiscard]] nlohmann::json make_sweep_document(const SweepInfo& info,
                                                 const std::vector<SweepPoint>& points);

/// A document read back: a sweep, or one run as a single point with value null.
struct Series {
  std::string vary_name;  ///< "" for a single run
  bool log_x = false;     ///< draw on a log axis (see use_log_axis)
  std::vector<SweepPoint> points;
  nlohmann::json system_local;  ///< null when the document has no snapshot
  nlohmann::json system_remote = nlohmann::json::array();  ///< one snapshot per slave
};

/// A Series, or why the document is not a sweep or run document.
struct SeriesParse {
  std::optional<Series> series;
  std::string error;
};
[[nodiscard]] SeriesParse series_from_document(const nlohmann::json& doc);

/// Whether values are best drawn on a log axis: all numeric and positive, and either produced
/// geometrically, or three or more with one constant ratio above 1, or spanning 100x or more.
[[nodiscard]] bool use_log_axis(const std::vector<nlohmann::json>& values, ValueSpacing spacing);

}  // namespace volley::analysis
