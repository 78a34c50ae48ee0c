#pragma once
/// \file
/// The JSON result document of one run (schema_version 2; every key is described in
/// docs/results.md). Complete and valid for failed and interrupted runs too: what is missing is
/// null or an empty array, never left out (except latency_uncorrected_ns, which only paced
/// transactions have).

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "volley/report/run_report.hpp"
#include "volley/results/run_result.hpp"

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

/// One side's part of the document: `result` in its JSON form (results::to_json) with the
/// document's figures added to the same objects (per transaction its step, window, iterations,
/// its flowops' sums, rates and latency percentiles; per flowop its rates and percentiles) and
/// `totals` over `timed_steps`. `names`, the master's slot names, adds to each master flowop the
/// slave it talks to ("host"). Also the form of a merged result (`volley merge`).
[[nodiscard]] nlohmann::json side_json(const results::RunResult& result,
                                       const std::vector<std::size_t>& timed_steps,
                                       const std::vector<SlotName>* names = nullptr);

/// "2025-11-21T09:41:59.188Z": ISO-8601 UTC with milliseconds (truncated toward the past).
[[nodiscard]] std::string iso8601_utc_ms(std::int64_t unix_ns);

}  // namespace volley::report
