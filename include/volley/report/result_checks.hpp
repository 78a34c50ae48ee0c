#pragma once
/// \file
/// Whether a run that ended without an error did what its profile asked. A run is not "ok" when
/// a timed step completed no transaction, when a group completed no iteration of one of its
/// transactions, when a paced transaction fell behind its rate, or when the bytes a slave counted
/// disagree with the master's beyond what the end of a step explains (the rule is in
/// docs/results.md, "Honest status").

#include <cstdint>
#include <string>

#include "volley/report/run_report.hpp"

namespace volley::report {

/// How far a paced transaction (rate=, bound by a duration) may fall short of its schedule
/// before the run fails: the iterations its strands' schedules asked for within the step
/// (results::SlotCounters::scheduled) less those they completed may be at most one per strand
/// plus 2% of the scheduled. A run that keeps its rate still ends each strand with at most one
/// iteration short: the one in flight at the cut, or one intended just before the step's end
/// that a timer woke a moment after it (the loop starts none at or after its end). The 2% is
/// for the late starts a loaded machine has not caught up with at the cut (a paced accept
/// against a storm of connects, under the sanitizers on two busy cores, ended 1.3% and 2.0%
/// short: the listener's accepts took the strands' CPU); a run that falls
/// behind its rate (more strands than the machine or its peer can serve at that rate) falls
/// further behind with every period, and beyond both.
inline constexpr std::uint64_t kPacedSlackPerStrand = 1;
inline constexpr std::uint64_t kPacedSlackPct = 2;

/// Whether `done` of `scheduled` iterations of a paced transaction run by `strands` strands is
/// behind its rate (beyond the slack above). Thread: any.
[[nodiscard]] bool paced_fell_behind(std::uint64_t scheduled, std::uint64_t done,
                                     std::uint64_t strands);

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
