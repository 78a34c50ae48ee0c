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

/// Strands that stopped on an error of a flowop without canfail, on the master or on any slave
/// that reported, as one sentence naming the side and its first such error; "" when none did.
/// A slave's strand that stops leaves the rest of its mirror undone, so the run failed even when
/// the master saw nothing wrong. Thread: any.
[[nodiscard]] std::string find_stopped_strands(const RunReport& report);

/// A run whose status is still ok fails when a strand stopped on an error (find_stopped_strands)
/// or what it measured is not what the profile asked for (find_result_problem); its failure then
/// says which. Thread: any.
void judge(RunReport& report, bool allow_empty);

/// The operations that failed and that canfail let the run go on after, over all steps, by side
/// and kind: "master: addr_unavailable 137, not_connected 137; slave 10.0.0.2: not_connected
/// 137"; "" when no operation failed. Thread: any.
[[nodiscard]] std::string failed_operations_by_kind(const RunReport& report);

}  // namespace volley::report
