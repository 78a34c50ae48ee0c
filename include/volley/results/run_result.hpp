#pragma once
// What one side (master or a slave) measured in one run: plain values, mergeable, serialisable.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "volley/results/slot_stats.hpp"

namespace volley::results {

/// A TLS connect's or accept's handshakes, counted apart from the operation (whose latency
/// covers the TCP connect and the handshake together).
struct HandshakeResult {
  SlotStats full;     ///< full handshakes: ops, latency, what they negotiated
  SlotStats resumed;  ///< handshakes that resumed the strand's previous session
};

struct FlowopResult {
  std::string type;
  SlotStats stats;
  std::optional<HandshakeResult> handshakes = {};  ///< protocol=tls connects and accepts only
};

struct TxnResult {
  std::string name;
  SlotStats stats;  ///< ops = iterations; latency = per iteration (from intended start when paced)
  std::optional<stats::LatencyHistogram> uncorrected_latency;  ///< paced transactions only
  std::vector<FlowopResult> flowops;
};

/// One strand's own counts over the run (uperf's per-thread statistics, -T), kept only when
/// asked for (engine::EngineConfig::count_strands).
struct StrandCounts {
  std::uint64_t ops = 0;           ///< flowop executions that completed
  std::uint64_t bytes = 0;         ///< bytes read and written
  std::uint64_t transactions = 0;  ///< transaction iterations completed
  void merge(const StrandCounts& other);
  friend bool operator==(const StrandCounts&, const StrandCounts&) = default;
};

struct GroupResult {
  std::string name;
  std::uint64_t strands = 0;
  std::vector<TxnResult> transactions;
  /// Each strand's counts, by its index in the group (all the group's strands, also those another
  /// process ran: theirs are zero here and come with that process's part); empty unless counted.
  std::vector<StrandCounts> strand_counts = {};
};

/// The wall-clock window of one barrier step (transaction index) on this side.
struct TxnWindow {
  std::int64_t start_unix_ns = 0;
  std::chrono::nanoseconds elapsed{0};
  bool is_duration = false;  ///< some group bounds this step by time
  /// Connections the peer wrote on during the step on which this side, after the end-of-step
  /// drain, had read exactly what the peer wrote (its side of the per-connection comparison;
  /// one it could not bring level fails the run).
  std::uint64_t connections_read_exactly = 0;
};

/// One side's first errors, with enough context to act on.
struct ErrorSample {
  std::string where;    ///< group/txn/flowop
  std::string message;  ///< error_code message plus peer
  /// This error stopped its strand (its flowop has no canfail): the run failed on it. The first
  /// such error of each worker is kept even when the samples are full.
  bool stopped = false;
  friend bool operator==(const ErrorSample&, const ErrorSample&) = default;
};

/// One process of one side: a side spread over processes (docs/architecture.md, "Processes") has
/// one per process, a side in one process has one.
struct ProcessRecord {
  std::string name;  ///< "master", "slave", "master process 2 of 3", ...
  std::int64_t pid = 0;
  std::uint64_t strands = 0;
  std::uint64_t connections = 0;  ///< data connections this process established or accepted
  /// Resident memory when the run's last timed step ended minus before the run was built: what
  /// the run's strands, connections and buffers cost this process in user space.
  std::int64_t rss_growth_bytes = 0;
  double cpu_user_s = 0;  ///< this process's CPU over the timed steps
  double cpu_sys_s = 0;
  friend bool operator==(const ProcessRecord&, const ProcessRecord&) = default;
};

struct RunResult {
  std::vector<GroupResult> groups;
  std::vector<TxnWindow> windows;
  std::uint64_t connections_requested = 0;
  std::uint64_t connections_established = 0;
  std::uint64_t failed_strands = 0;  ///< strands stopped by an error without canfail
  std::vector<ErrorSample> error_samples;
  std::vector<ProcessRecord> processes;

  [[nodiscard]] SlotCounters totals() const;         ///< over every flowop slot
  [[nodiscard]] std::uint64_t transactions() const;  ///< iterations of all transactions
};

/// Adds `part` (another process's share of the same plan) to `into`: counts and histograms add,
/// strands and each strand's counts add, each step's window spans both, error samples and process
/// records are appended. An empty `into` (no groups) becomes `part`.
void merge_into(RunResult& into, const RunResult& part);

/// Data connections per process record, RSS growth summed over the records divided by the
/// connections they hold; 0 without connections.
double memory_per_connection(const RunResult& result);

}  // namespace volley::results
