#pragma once
// What a process holds, read from /proc: open descriptors, threads, resident memory. The fault
// suite compares a slave with its idle baseline after every fault.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace volley::test {

struct ProcStats {
  std::size_t fds = 0;        ///< entries of /proc/PID/fd
  std::size_t threads = 0;    ///< Threads: in /proc/PID/status
  std::uint64_t rss_kib = 0;  ///< VmRSS: in /proc/PID/status
};

/// Nullopt when the process is gone.
std::optional<ProcStats> proc_stats(pid_t pid);

std::string to_string(const ProcStats& s);

/// Back to the baseline: the same descriptors and threads, and memory at most `rss_slack_kib`
/// above it (an allocator keeps some freed memory).
bool at_baseline(const ProcStats& now, const ProcStats& baseline, std::uint64_t rss_slack_kib);

/// Polls every 5 ms until `pid` is at its baseline; how long that took, or nullopt when it was
/// not within `limit` (or the process is gone).
std::optional<std::chrono::milliseconds> wait_for_baseline(pid_t pid, const ProcStats& baseline,
                                                           std::uint64_t rss_slack_kib,
                                                           std::chrono::milliseconds limit);

}  // namespace volley::test
