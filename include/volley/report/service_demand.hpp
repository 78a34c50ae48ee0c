#pragma once
/// \file
/// Service demand: CPU time spent per unit of work, netperf's figure of merit. Computed for one
/// side from its CPU usage over the timed part and the master's timed transactions and bytes (the
/// work both sides did together).
///   process_us_per_transaction = (process user + sys CPU s) * 1e6 / transactions
///   system_us_per_transaction  = busy_pct / 100 * ncpus * wall_s * 1e6 / transactions
///   process_us_per_kb, system_us_per_kb: the same divided by (bytes / 1024) instead.
/// ncpus is the number of CPUs present in both samples; wall_s is the CPU sample's interval.

#include <optional>

#include "volley/report/run_report.hpp"
#include "volley/sampling/cpu_sampler.hpp"

namespace volley::report {

/// Each figure is nullopt when its input is missing (no rusage, no /proc/stat) or the divisor is
/// zero. Thread: any (value type).
struct ServiceDemand {
  std::optional<double> process_us_per_transaction;
  std::optional<double> system_us_per_transaction;
  std::optional<double> process_us_per_kb;
  std::optional<double> system_us_per_kb;
};

/// Service demand of a side whose CPU usage is `cpu`, for the work in `master_timed`.
[[nodiscard]] ServiceDemand service_demand(const sampling::CpuUsage& cpu,
                                           const Totals& master_timed);

}  // namespace volley::report
