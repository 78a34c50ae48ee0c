#pragma once
/// \file
/// Master-versus-slave comparison, uperf's "Difference(%)" row: the master's bytes written should
/// be the slave's bytes read and the other way round, so each side's bytes (both directions) and
/// operations over the timed steps should match.

#include <cstdint>
#include <optional>
#include <string>

#include "volley/report/run_report.hpp"

namespace volley::report {

/// uperf's ERR_PER: (master - slave) / master * 100. 0 when both are 0; nullopt when only the
/// master is 0 (no reference). Positive when the slave saw less than the master.
[[nodiscard]] std::optional<double> difference_pct(double master, double slave);

/// One slave compared with the master over the timed steps. Thread: any (value type).
struct SideComparison {
  std::string host;
  Totals master;
  Totals slave;
  std::optional<double> seconds_difference_pct;
  std::optional<double> bytes_difference_pct;
  std::optional<double> bits_per_s_difference_pct;
  std::optional<double> ops_difference_pct;
  std::optional<double> errors_difference_pct;
};

/// The comparison of `report.slaves[slave]` with the master.
[[nodiscard]] SideComparison compare_with_master(const RunReport& report, std::size_t slave);

}  // namespace volley::report
