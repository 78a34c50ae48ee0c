#pragma once
/// \file
/// `volley merge`: one result from the result documents of several masters that ran at the same
/// time (`volley run --start-at`). Each document's results are read back (results::
/// run_result_from_json) and merged as the processes of one side are (results::merge_into):
/// counts and bytes add, latency percentiles come from the merged histograms (exact: the same as
/// one histogram fed every master's samples), each step's window runs from the first release to
/// the last end. CPU and NIC stay per host; `window` is the overlap of the masters' timed parts.
/// The merged document is described in docs/results.md ("Merged document"). Pure functions.
/// Thread: any.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace volley::analysis {

/// One master's result document and what to call it in messages (its file name).
struct MergeSource {
  std::string name;
  nlohmann::json document;
};

/// The merged document, or why the documents cannot be merged (a sentence naming the file).
struct MergeOutcome {
  nlohmann::json document;  ///< null when `error` is set
  std::string error;
  /// Set when they were merged but some master's run failed or was interrupted: the merged
  /// result then covers less than was asked for.
  std::string warning;
};

/// Merges two or more run documents (report::to_json_document). Refused: fewer than two, a
/// document that is not a run result or whose results cannot be read back (written by an older
/// volley), different profiles (groups, transactions or flowops differ), and masters whose timed
/// parts did not overlap.
[[nodiscard]] MergeOutcome merge_run_documents(const std::vector<MergeSource>& sources);

/// The merged result as text: the window, each master, per transaction and the totals.
[[nodiscard]] std::string format_merged(const nlohmann::json& merged);

}  // namespace volley::analysis
