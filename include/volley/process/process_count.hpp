#pragma once
// How many processes one side of a run is spread over (docs/architecture.md, "Processes").
//
// uperf forks one process per nprocs; volley's strands are coroutines, so a process per strand
// would only cost memory and context switches. A side needs more than one process for two
// reasons only: it opens more connections than one process may hold descriptors for, or the
// profile asks for processes (nprocs) and there are cores to put them on.
#include <cstdint>

#include "volley/engine/plan.hpp"
#include "volley/profile/model.hpp"

namespace volley::process {

/// The most processes one side spreads over.
inline constexpr std::uint32_t kMaxProcesses = 64;

struct ProcessBudget {
  std::uint32_t requested = 0;      ///< --processes; 0: decide
  std::uint64_t open_files = 1024;  ///< this process's descriptor limit (RLIMIT_NOFILE, soft)
  std::uint32_t cores = 1;
};

/// Data connections one side of `plan` holds open at once at most (every connect and accept of
/// a strand counted, as the slave's --max-connections does).
std::uint64_t connections_needed(const engine::Plan& plan);

/// Descriptors one process may spend on data connections out of `open_files`: the rest is for
/// the control link, listeners, each worker's epoll and wake-up descriptors, and files.
std::uint64_t connection_budget(std::uint64_t open_files);

/// The processes a side of `plan` runs in: `requested` when given (at most one per strand);
/// otherwise 1 unless a group is written with nprocs, and then enough for the descriptors the
/// connections need, and at least one per core, but never more processes than nprocs strands.
std::uint32_t process_count(const profile::Profile& profile, const engine::Plan& plan,
                            const ProcessBudget& budget);

/// This process's descriptor limit (soft) and core count.
ProcessBudget machine_budget(std::uint32_t requested);

}  // namespace volley::process
