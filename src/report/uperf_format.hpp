#pragma once
// Parts of uperf's layout shared by its sections (private to src/report): uperf_output.cpp has the
// report, uperf_averages.cpp the -t and -f tables.
#include <string>

#include "volley/report/run_report.hpp"

namespace volley::report::detail {

/// uperf's adaptive_print_time(): ns, us, ms or s with two decimals, right-aligned in `width`,
/// then a blank.
std::string uperf_time(double ns, int width);
/// A column volley has no figure for: a dash where uperf prints a made-up 0.
std::string uperf_missing(int width);

/// uperf's -t table: one row per transaction of each group, named Txn0.. (0-based, as uperf's
/// table names them), skipping transactions that never completed.
std::string uperf_transaction_averages(const RunReport& report);
/// uperf's -f table: one row per flowop of each transaction that completed any.
std::string uperf_flowop_averages(const RunReport& report);

}  // namespace volley::report::detail
