#pragma once
/// \file
/// uperf's output where programs read it (`volley -m PROFILE -R ...`): the raw, time-stamped lines
/// that wrappers parse (`timestamp_ms:T name:Txn2 nr_bytes:B nr_ops:O`: benchmark-wrapper,
/// k8s-netperf, pbench, crucible; printed live by UperfRawLines), then uperf's end-of-run sections
/// with their headings and column order, filled with volley's figures. Only counters (bytes and
/// operations per transaction, flowop and group) and the final results are read;
/// docs/uperf-compatibility.md lists every place where a figure means something different from
/// uperf's.

#include <cstdint>
#include <string>
#include <string_view>

#include "volley/report/run_report.hpp"

namespace volley::report {

/// Which of uperf's statistics are printed (uperf's `copt` bits).
struct UperfSections {
  bool raw = false;            ///< -R: time-stamped raw lines instead of uperf's live lines
  bool stats = true;           ///< the interval lines and the Total line (off with -n)
  bool groups = false;         ///< -g: Group Details
  bool strands = false;        ///< -T: Strand Details
  bool transactions = false;   ///< -t: the Txn averages table
  bool flowops = false;        ///< -f (also -p, -e, -E): the Flowop averages table
  bool netstat = true;         ///< on by default (-k): Netstat statistics
  bool run_statistics = true;  ///< on by default: Run Statistics and Difference(%)
  friend bool operator==(const UperfSections&, const UperfSections&) = default;
};

/// uperf's statistics letters applied in order, as uperf's option loop applies them: `n` clears
/// everything before it, `a` turns on t, f, g, T, k and the Run Statistics. Letters that are not
/// statistics (m, s, v, ...) are ignored. Thread: any.
[[nodiscard]] UperfSections uperf_sections(std::string_view letters);

/// The start of uperf's first line, `Starting 4 threads running profile:NAME ... ` (no line end;
/// format_uperf_setup_time() ends it). uperf lower-cases the whole profile, its name included,
/// and wrappers read the name as uperf prints it.
[[nodiscard]] std::string format_uperf_start(std::string_view profile_name, std::uint64_t threads,
                                             std::uint64_t processes);
/// The end of that line: `  0.12 seconds` and the line end.
[[nodiscard]] std::string format_uperf_setup_time(double seconds);

/// `timestamp_ms:1795262520188.8608 name:Txn2 nr_bytes:17259648 nr_ops:269682` (CLOCK_REALTIME
/// in ms with four decimals, exactly from the ns value).
[[nodiscard]] std::string format_uperf_raw_line(std::int64_t unix_ns, std::string_view name,
                                                std::uint64_t bytes, std::uint64_t ops);

/// uperf's rule: 79 dashes (uperf's width when stdout is not a tty) and the line end.
[[nodiscard]] std::string uperf_rule();

/// When the run ended on the master, as uperf stamps its Total and Group lines: the last step's
/// end, or the end of the report's duration (ns since the Unix epoch).
[[nodiscard]] std::int64_t uperf_run_end_ns(const RunReport& report);

/// The sections `sections` asks for, in uperf's order, for a finished (or stopped) run; they
/// follow the time-stamped lines (UperfRawLines, uperf_raw_lines.hpp). Only `sections.raw`
/// output is supported: the caller prints volley's own report otherwise.
[[nodiscard]] std::string format_uperf_report(const RunReport& report,
                                              const UperfSections& sections);

}  // namespace volley::report
