#pragma once
/// \file
/// The JSON result document of one run (schema_version 2; every key is described in
/// docs/results.md). Complete and valid for failed and interrupted runs too: what is missing is
/// null or an empty array, never left out (except latency_uncorrected_ns, which only paced
/// transactions have).

#include <cstdint>
#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "volley/report/run_report.hpp"
#include "volley/stats/latency_histogram.hpp"

namespace volley::report {

/// Version of the document layout; bumped when a key changes meaning or disappears.
inline constexpr int kJsonSchemaVersion = 2;

/// The whole document. Thread: any.
[[nodiscard]] nlohmann::json to_json_document(const RunReport& report);

/// to_json_document() pretty-printed with a 2-space indent and a trailing newline.
void write_json_document(const RunReport& report, std::ostream& out);

/// `j` indented by two spaces like dump(2), but with arrays of numbers (and of such arrays:
/// histogram buckets) on one line, plus a trailing newline. Invalid UTF-8 is replaced.
void write_pretty_json(const nlohmann::json& j, std::ostream& out);

/// A `latency_ns` object: {count, min, mean, stddev, p50, p90, p99, p99_9, p99_99, max,
/// histogram}, ns. The histogram (sparse, stats::to_json) lets `volley merge` compute exact
/// percentiles over several masters.
[[nodiscard]] nlohmann::json latency_json(const stats::LatencyHistogram& h);

/// "2025-11-21T09:41:59.188Z": ISO-8601 UTC with milliseconds (truncated toward the past).
[[nodiscard]] std::string iso8601_utc_ms(std::int64_t unix_ns);

}  // namespace volley::report
