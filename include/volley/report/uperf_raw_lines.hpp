#pragma once
/// \file
/// uperf's time-stamped lines (`volley -m PROFILE -R`), printed as the run goes, as uperf prints
/// them: per transaction step its cumulative counters (a zero line at the step's release, a line
/// at the end of each interval, a last line at the step's end; `Txn1` is step 0, as uperf numbers
/// its live lines), and once the run is over the rule and the Total line. The counters are the
/// master's, of every flowop of every group in the step (uperf's aggregate: bytes in both
/// directions, flowop executions). Consecutive lines of a step never share a millisecond: pbench
/// reads whole milliseconds and divides by their difference.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "volley/report/run_report.hpp"

namespace volley::report {

class UperfRawLines {
 public:
  /// `lines`: whether the counters are printed (uperf's -n turns them off; the end of the start
  /// line is printed anyway). `started_unix_ns`: when the command started; uperf ends its start
  /// line with the time from then to the first release.
  UperfRawLines(bool lines, std::int64_t started_unix_ns)
      : lines_(lines), started_unix_ns_(started_unix_ns) {}

  /// What interval `sample` adds, as the master shows it (intervals come in order; the report
  /// holds the run so far, its steps' times in `master_steps`): before the first, the end of the
  /// start line; then the lines of every step up to the one running at the sample's end.
  [[nodiscard]] std::string interval(const RunReport& report, const IntervalSample& sample);

  /// After the run: what no interval printed (the end of the start line when none did, the last
  /// line of each step that ended after the last interval, with its counters from the results,
  /// every step's lines when no interval came), then the rule and the Total line over the whole
  /// run.
  [[nodiscard]] std::string finish(const RunReport& report);

 private:
  struct Counts {
    std::uint64_t bytes = 0;
    std::uint64_t ops = 0;
    friend bool operator==(const Counts&, const Counts&) = default;
  };
  struct Line {
    std::int64_t unix_ns = 0;
    Counts counts;
  };

  std::string start_line_end(const RunReport& report);
  /// Makes room for every step the report knows of; returns their number.
  std::size_t track_steps(const RunReport& report);
  void add_counts(const RunReport& report, const IntervalSample& sample);
  /// The zero line of step `step`, at its release (or `fallback_ns`), unless it is out already.
  std::string open(const RunReport& report, std::size_t step, std::int64_t fallback_ns);
  /// The line of step `step` with its counters so far, at `unix_ns`. One in the millisecond of the
  /// step's previous line (or before it) is not printed when it says nothing new; when it does, it
  /// moves to the next millisecond, or to `later_ns` (when its counters were seen) if it was
  /// stamped before the previous line.
  std::string emit(std::size_t step, std::int64_t unix_ns, std::int64_t later_ns);

  bool lines_;
  std::int64_t started_unix_ns_;
  bool started_line_ended_ = false;
  std::vector<Counts> cumulative_;         ///< per step
  std::vector<std::optional<Line>> last_;  ///< per step: the last line printed
  std::size_t next_ = 0;                   ///< the first step whose last line is not out yet
};

}  // namespace volley::report
