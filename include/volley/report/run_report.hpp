#pragma once
// Everything one run produced, gathered for the reporters: both sides' results, CPU and NIC over
// the timed part, the interval series and what identifies the run. Reporters only present it;
// the statistics are computed here or in engine/stats, never in a reporter.
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "volley/results/run_result.hpp"
#include "volley/report/tcp_figures.hpp"
#include "volley/results/slot_stats.hpp"
#include "volley/sampling/cpu_sampler.hpp"
#include "volley/sampling/kernel_counters.hpp"
#include "volley/sampling/nic_sampler.hpp"

namespace volley::report {

enum class RunStatus { kOk, kFailed, kInterrupted };
std::string_view to_string(RunStatus s);  ///< "ok", "failed", "interrupted"

/// One side of the run: the master, or one slave.
struct SideReport {
  std::string role;  ///< "master" or "slave"
  std::string host;  ///< "master", or the slave's remotehost as written in the profile
  results::RunResult result;
  std::optional<sampling::CpuUsage> cpu;  ///< over the timed part (see RunReport::timed_steps)
  std::optional<sampling::NicRates> nic;  ///< over the timed part
  /// The host's kernel counters over the timed part: one sample per host, whatever its processes.
  std::optional<sampling::KernelCounterDeltas> kernel;
  nlohmann::json system;  ///< sampling::read_system_snapshot() of that host; null when unknown
  /// A slave without results: why ("lost slave X: ...", "did not report...", "the run stopped
  /// before its results were asked for"). Empty when the side reported. A missing side's
  /// `result` is empty and must be shown as missing, never as zeros.
  std::string missing;
  /// The engine the side's workers waited with: "epoll" or "uring"; empty when the side did not
  /// say (a slave of an older volley).
  std::string io = {};
};

/// A few percentiles of one latency distribution, ns (0 when `count` is 0).
struct LatencySummary {
  std::uint64_t count = 0;
  std::uint64_t p50_ns = 0;
  std::uint64_t p99_ns = 0;
};

/// One transaction over one interval: its iterations and latency from its transaction slot, its
/// operations, bytes, errors and expired added up over its flowop slots.
struct IntervalTxnCounters {
  std::uint64_t transactions = 0;
  std::uint64_t ops = 0;
  std::uint64_t bytes = 0;
  std::uint64_t errors = 0;
  std::uint64_t expired = 0;
  std::uint64_t handshakes = 0;  ///< TLS handshakes within its flowops, full and resumed
  std::uint64_t resumed = 0;     ///< of those, resumed
  LatencySummary latency;        ///< per iteration
  /// UDP, the master's side: datagrams it sent, and what arrived at it (received, gaps, late,
  /// duplicates, timed-out reads; jitter the largest of its flowops').
  results::DatagramCounters datagrams;
  /// UDP, the slaves' side over the same interval (their `interval_counts`, added up): what they
  /// sent, and what arrived at them. Whole only when the sample's `peers.complete()`.
  results::DatagramCounters peer_datagrams;
  /// The master's TCP connections of this transaction as the interval ended (TCP_INFO).
  std::optional<TcpBrief> tcp;
  /// The slaves' TCP connections of this transaction as they took the interval: their parts
  /// merged as they arrive (`peer_tcp_parts`), then kept as a brief once the interval is whole
  /// (settle_peer_tcp). Meaningful only when the sample's `peers.complete()`.
  stats::TcpSummary peer_tcp_parts;
  std::optional<TcpBrief> peer_tcp;
};

/// Whose counts an interval holds besides the master's. Runs with a UDP connection, or a TCP one
/// while TCP_INFO is read, ask the slaves; `asked` is 0 otherwise.
struct IntervalPeers {
  std::size_t asked = 0;     ///< slaves asked for their counts of this interval
  std::size_t answered = 0;  ///< ... that answered with counts
  std::string missing;       ///< why some did not ("slave h: ..."); empty when all did
  [[nodiscard]] bool complete() const { return asked > 0 && answered == asked && missing.empty(); }
};

/// One host's kernel counters that moved over one interval (sampling::moved_counters).
struct HostCounters {
  std::string host;  ///< "master", or the slave's remotehost as written in the profile
  sampling::ProtocolCounterMap moved;
};

/// One interval of the master's time series, gathered during [start, start + length). It keeps
/// counters and percentiles only (a few dozen bytes per transaction), so a long run's series
/// stays small; the full histograms go to the latency log as intervals happen, if asked for.
struct IntervalSample {
  std::int64_t start_unix_ns = 0;
  std::chrono::nanoseconds since_run_start{0};
  std::chrono::nanoseconds length{0};
  std::size_t step = 0;  ///< the transaction index (barrier step) running at the end of it
  /// One entry per transaction slot, in slot order (see RunReport::slot_names).
  std::vector<IntervalTxnCounters> txns;
  /// The iteration latency of every transaction of `step` merged (the live line's p50/p99).
  LatencySummary step_latency;
  IntervalPeers peers;
  /// Each host's kernel counters over the interval: the master's, then each slave's as its part
  /// arrives (a slave that did not answer, or runs in processes, has none).
  std::vector<HostCounters> kernel;
};

/// Where each stat slot belongs, so interval rows can name their transaction.
struct SlotName {
  std::size_t group = 0;
  std::size_t txn = 0;
  std::optional<std::size_t> flowop;
  bool uncorrected = false;
  std::string name;  ///< "group0/txn2" or "group0/txn2/read"
  /// Flowop slots: the remotehost its connection goes to ("" for think, nop, or when unknown).
  std::string host;
  /// A TLS connect's or accept's handshakes (full or resumed; name ends ":handshake" or
  /// ":resumed"), counted within its flowop's operations: not an operation of its own.
  bool handshake = false;
};

/// One barrier step on the master as the run goes: what is printed live reads it before the
/// results exist (they have the engine's exact windows, `master.result.windows`).
struct MasterStep {
  std::int64_t released_unix_ns = 0;  ///< when it was released; 0: not yet
  std::int64_t ended_unix_ns = 0;     ///< when the master's own strands ended it; 0: not yet
  /// The master process's CPU time (user + system, all its threads) from the release to the end
  /// of the step's drain, seconds; nullopt when unknown, or when the master's side is spread over
  /// processes (this one's CPU would be a share of it).
  std::optional<double> cpu_s = std::nullopt;
};

struct RunReport {
  std::string volley_version;
  RunStatus status = RunStatus::kOk;
  std::string failure;  ///< why the run failed or stopped; empty when ok
  // What was run.
  std::string profile_name;
  std::string profile_path;
  std::string profile_sha256;
  std::map<std::string, std::string> variables;
  std::vector<std::string> command_line;
  std::uint64_t seed = 0;
  std::size_t workers = 0;
  // When.
  std::int64_t start_unix_ns = 0;
  std::chrono::nanoseconds duration{0};  ///< from the first release to the last barrier
  /// The barrier steps (transaction indices) that make up the timed part: the ones bounded by a
  /// duration, or all of them when none is. Rates in `totals` and CPU/NIC cover these only.
  std::vector<std::size_t> timed_steps;
  /// --start-at: when the timed steps were to start, ns since the Unix epoch.
  std::optional<std::int64_t> start_at_unix_ns;
  // What happened.
  SideReport master;
  std::vector<SideReport> slaves;
  std::vector<SlotName> slot_names;
  std::vector<IntervalSample> intervals;
  /// One per barrier step, filled as the master runs them.
  std::vector<MasterStep> master_steps;
};

/// Totals over the timed steps of one side: transactions (iterations), flowop ops, bytes (both
/// directions), errors by kind, and the seconds they took (the sum of the timed windows).
struct Totals {
  std::uint64_t transactions = 0;
  std::uint64_t ops = 0;
  std::uint64_t bytes = 0;
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t expired = 0;
  std::uint64_t handshakes = 0;  ///< TLS handshakes within the ops, full and resumed
  std::uint64_t resumed = 0;     ///< of those, resumed
  std::array<std::uint64_t, results::kErrorKindCount> errors{};
  double seconds = 0;
  [[nodiscard]] double transactions_per_s() const {
    return seconds > 0 ? static_cast<double>(transactions) / seconds : 0;
  }
  [[nodiscard]] double ops_per_s() const {
    return seconds > 0 ? static_cast<double>(ops) / seconds : 0;
  }
  [[nodiscard]] double bits_per_s() const {
    return seconds > 0 ? 8.0 * static_cast<double>(bytes) / seconds : 0;
  }
  [[nodiscard]] std::uint64_t error_total() const;
};

/// Which flowops a total takes: all of them, or only the streams (the flowops that carried no
/// datagram: TCP, think, nop). UDP loses datagrams by design, so exact byte rules apply to the
/// streams only; a UDP flowop's bytes all come from datagrams, so it counts as one here exactly
/// when it moved something.
enum class Traffic { kAll, kStreams };

Totals timed_totals(const results::RunResult& result, const std::vector<std::size_t>& timed_steps,
                    Traffic traffic = Traffic::kAll);
/// All steps, for the whole-run view.
Totals all_totals(const results::RunResult& result, Traffic traffic = Traffic::kAll);

/// How long barrier step `step` took on this side, seconds (0 when the step has no window).
[[nodiscard]] double window_seconds(const results::RunResult& result, std::size_t step);
/// The counters of a transaction's flowops added up: its operations, bytes, errors and expired
/// (the transaction slot itself counts iterations in `ops`, and does not count expired).
[[nodiscard]] results::SlotCounters flowop_counters(const results::TxnResult& txn,
                                                    Traffic traffic = Traffic::kAll);
/// Whether a flowop's counters belong to `traffic`.
[[nodiscard]] bool counts_in(const results::SlotCounters& flowop, Traffic traffic);
/// When the master released its first timed step (ns since the Unix epoch); nullopt when no
/// timed step ran.
[[nodiscard]] std::optional<std::int64_t> timed_start_unix_ns(const RunReport& report);
/// --start-at: how far the first timed step's release was from the requested time (positive:
/// late), ns; nullopt without --start-at or when no timed step ran.
[[nodiscard]] std::optional<std::int64_t> start_offset_ns(const RunReport& report);
/// The compact form of one interval's slot counters (indexed like `slot_names`): what the series
/// keeps. `step` is the step running at the end of the interval.
void summarize_interval(const std::vector<SlotName>& slot_names,
                        const std::vector<results::SlotStats>& slots, IntervalSample& sample);
/// Adds one slave's datagram counters of transaction (group, txn) over an interval to the
/// sample's row of that transaction (`peer_datagrams`); false when the master has no such
/// transaction.
bool add_peer_datagrams(const std::vector<SlotName>& slot_names, std::size_t group, std::size_t txn,
                        const results::DatagramCounters& counts, IntervalSample& sample);
/// Adds one slave's TCP summary of transaction (group, txn) at an interval to the sample's row
/// of that transaction (`peer_tcp_parts`); false when the master has no such transaction.
bool add_peer_tcp(const std::vector<SlotName>& slot_names, std::size_t group, std::size_t txn,
                  const stats::TcpSummary& tcp, IntervalSample& sample);
/// Once every slave's part of the sample has arrived: each row's merged parts become its
/// `peer_tcp` brief, and the parts are dropped (a long run's series must stay small).
void settle_peer_tcp(IntervalSample& sample);
/// Whether barrier step `step` is one of `report.timed_steps`.
[[nodiscard]] bool is_timed_step(const RunReport& report, std::size_t step);

}  // namespace volley::report
