#pragma once
/// \file
/// Text output for people: the live line printed once per interval, and the final report
/// (run header, transactions, flowops, totals of the timed part, CPU, NIC, and uperf's
/// "Run Statistics" table so uperf users find what they know). Tables fit in 80 columns;
/// byte counts are 1024-based, bit rates and counts per second 1000-based (as in uperf).

#include <string>

#include "volley/report/run_report.hpp"

namespace volley::report {

/// One live line for the step running at the end of `sample` (all groups running that step
/// added up), without a line end, e.g.
/// "txn2    5.00s 141.99k txn/s 283.98k op/s 72.70Mb/s p50 27.1us p99 61.3us err 0"
/// The time is how long the step has been running. Under 80 columns for names up to 6
/// characters and fewer than 100 errors. Thread: any.
[[nodiscard]] std::string format_interval_line(const RunReport& report,
                                               const IntervalSample& sample);

/// The final report, several tables separated by blank lines, ending with a line end.
/// Thread: any.
[[nodiscard]] std::string format_final_report(const RunReport& report);

}  // namespace volley::report
