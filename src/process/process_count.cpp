#include "volley/process/process_count.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <thread>

namespace volley::process {

std::uint64_t connections_needed(const engine::Plan& plan) {
  std::uint64_t total = 0;
  for (const auto& c : plan.connections) total += plan.groups[c.group].strands;
  return total;
}

std::uint64_t connection_budget(std::uint64_t open_files) {
  // 10 % and 256 more are left for everything that is not a data connection.
  const std::uint64_t reserve = 256 + open_files / 10;
  return open_files > reserve ? open_files - reserve : 1;
}

std::uint32_t process_count(const profile::Profile& profile, const engine::Plan& plan,
                            const ProcessBudget& budget) {
  const std::uint64_t strands = std::max<std::uint64_t>(plan.total_strands, 1);
  if (budget.requested > 0) {
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(budget.requested, strands));
  }
  std::uint64_t nprocs = 0;
  for (std::size_t g = 0; g < profile.groups.size() && g < plan.groups.size(); ++g) {
    if (profile.groups[g].from_nprocs) nprocs += plan.groups[g].strands;
  }
  if (nprocs <= 1) return 1;
  const std::uint64_t budget_per_process = connection_budget(budget.open_files);
  const std::uint64_t for_descriptors =
      (connections_needed(plan) + budget_per_process - 1) / budget_per_process;
  const std::uint64_t wanted = std::max<std::uint64_t>(budget.cores, for_descriptors);
  return static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>(std::min(wanted, nprocs), 1, kMaxProcesses));
}

ProcessBudget machine_budget(std::uint32_t requested) {
  ProcessBudget budget;
  budget.requested = requested;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    budget.open_files = limit.rlim_cur;
  }
  budget.cores = std::max(1U, std::thread::hardware_concurrency());
  return budget;
}

}  // namespace volley::process
