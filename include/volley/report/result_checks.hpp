#pragma once
/// \file
/// Whether a run that ended without an error did what its profile asked. A run is not "ok" when
/// a timed step completed no transaction, when a group completed no iteration of one of its
/// transactions, or when the bytes a slave counted disagree with the master's beyond what the
/// end of a step explains (the rule is in docs/results.md, "Honest status").

#include <string>

#include "volley/report/run_report.hpp"

namespace volley::report {

/// The first problem found, as one sentence; "" when there is none. `allow_empty` accepts empty
/// steps and groups (for a profile that means them) but never disagreeing bytes. Slaves marked
/// missing are skipped: their absence already failed the run. Thread: any.
[[nodiscard]] std::string find_result_problem(const RunReport& report, bool allow_empty);

}  // namespace volley::report
