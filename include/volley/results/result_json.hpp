#pragma once
// A result's one JSON form: what a slave or a child process sends in its `results` message, and
// what the result document holds for each side, which adds its own figures (rates, percentiles,
// totals) beside these keys in the same objects. docs/results.md describes both.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "volley/results/run_result.hpp"

namespace volley::results {

/// {groups[{name, strands, transactions[{name, counters, latency_ns{histogram},
/// latency_uncorrected_ns?, tcp?, flowops[{type, <counters>, latency_ns{histogram}, tcp?}]}]}],
/// windows[{start_unix_ns, elapsed_ns, is_duration}], connections_requested,
/// connections_established, failed_strands, error_samples[{where, message, stopped}],
/// processes[{name, pid, strands, connections, rss_growth_bytes, cpu_user_s, cpu_sys_s}]}.
/// Counters are {ops, bytes_read, bytes_written, expired, errors, datagrams?, zerocopy?} (a
/// transaction's under `counters`, a flowop's in its own object): errors_to_json,
/// datagrams_to_json and zerocopy_to_json.
[[nodiscard]] nlohmann::json to_json(const RunResult& result);

/// Reads to_json's form back; keys it does not know (a document's figures) are ignored.
/// nullopt, with `error` set to "malformed results: PATH: what is wrong" (PATH a JSON pointer),
/// when a key is missing, of the wrong type, out of its range, or not a valid histogram or TCP
/// summary. Never throws.
[[nodiscard]] std::optional<RunResult> run_result_from_json(const nlohmann::json& j,
                                                            std::string& error);

/// {kind: n} for the kinds that occurred (ErrorKind's names), plus "total".
[[nodiscard]] nlohmann::json errors_to_json(const SlotCounters& counters);

/// {sent, received, lost, gaps, late, duplicates, timeouts, jitter_ns}: `gaps` is
/// DatagramCounters::lost and `lost` its net_lost() (a figure; it is not read back).
[[nodiscard]] nlohmann::json datagrams_to_json(const DatagramCounters& d);

/// {sends, zero_copied, copied, unconfirmed}: `unconfirmed` is ZeroCopyCounters::unconfirmed() (a
/// figure; it is not read back).
[[nodiscard]] nlohmann::json zerocopy_to_json(const ZeroCopyCounters& z);

}  // namespace volley::results
