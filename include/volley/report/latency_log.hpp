#pragma once
/// \file
/// The merged latency histograms of a run as text others can re-analyse (--latency-log): every
/// non-empty bucket of every transaction and flowop, for the master and each slave, as CSV rows
///   side,host,group,transaction,flowop,bucket_lower_ns,bucket_upper_ns,count
/// after a few '#' comment lines describing them. `flowop` is empty for a transaction's own
/// (per-iteration) histogram, "uncorrected" for a paced transaction's latency measured from the
/// actual rather than the intended start, and "<index>:<type>" (0-based index in the
/// transaction, e.g. "1:read") for a flowop.

#include <iosfwd>
#include <string_view>

#include "volley/report/run_report.hpp"

namespace volley::report {

/// The column header row (after the comments), without the line end.
inline constexpr std::string_view kLatencyLogHeader =
    "side,host,group,transaction,flowop,bucket_lower_ns,bucket_upper_ns,count";

/// Comments, header and one row per non-empty bucket, "\n" line ends. Thread: any.
void write_latency_log(const RunReport& report, std::ostream& out);

}  // namespace volley::report
