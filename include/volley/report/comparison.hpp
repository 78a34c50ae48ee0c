#pragma once
/// \file
/// Master-versus-slave comparison, uperf's "Difference(%)" row: the master's bytes written should
/// be the slave's bytes read and the other way round, so each side's bytes (both directions) and
/// operations over the timed steps should match.
///
/// With several slaves the master is compared with the SUM of its slaves, and each slave with its
/// own share of the master's traffic: the master's flowops on connections to that slave, plus the
/// think and nop flowops of the groups that talk to it (its mirror runs those too). The share is
/// found from SlotName::host; a report without host information (one written before it existed)
/// compares every slave with the master's whole totals.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "volley/report/run_report.hpp"

namespace volley::report {

/// uperf's ERR_PER: (master - slave) / master * 100. 0 when both are 0; nullopt when only the
/// master is 0 (no reference). Positive when the slave saw less than the master.
[[nodiscard]] std::optional<double> difference_pct(double master, double slave);

/// One slave (or the slaves' sum) compared with the master over the timed steps. Every
/// difference is nullopt when `missing` is not empty. Thread: any (value type).
struct SideComparison {
  std::string host;     ///< the slave's host, or "" for the sum of the slaves
  std::string missing;  ///< why it cannot be compared (a slave without results), else ""
  Totals master;        ///< the master's share with this slave (all of it for the sum)
  Totals slave;
  std::optional<double> seconds_difference_pct;
  std::optional<double> bytes_difference_pct;
  std::optional<double> bits_per_s_difference_pct;
  std::optional<double> ops_difference_pct;
  std::optional<double> errors_difference_pct;
};

/// The master's traffic with `host` over `steps` (all steps when null), as defined above; the
/// time is the master's (the sum of those steps' windows).
[[nodiscard]] Totals master_share(const RunReport& report, std::string_view host,
                                  const std::vector<std::size_t>* steps,
                                  Traffic traffic = Traffic::kAll);

/// Where the peer of the master's flowop (group, txn, flowop) is in the result of the slave
/// serving `host`: the mirror keeps, in order, the flowops on connections to that host and the
/// think and nop flowops (profile::mirror), so the index is the count of those before it. nullopt
/// when that slave has no peer of it (its connection goes to another host). A report without
/// host information maps each flowop to the same index.
[[nodiscard]] std::optional<std::size_t> peer_flowop(const RunReport& report, std::string_view host,
                                                     std::size_t group, std::size_t txn,
                                                     std::size_t flowop);

/// The datagram counters of the peers of the master's flowop (group, txn, flowop), added up over
/// the slaves that reported (see peer_flowop).
[[nodiscard]] results::DatagramCounters peer_datagrams(const RunReport& report, std::size_t group,
                                                       std::size_t txn, std::size_t flowop);

/// The comparison of `report.slaves[slave]` with the master's share of traffic with it (with a
/// single slave, the master's share is all of its traffic to slaves).
[[nodiscard]] SideComparison compare_with_master(const RunReport& report, std::size_t slave);

/// The master's timed totals against the slaves' added up: bytes, operations and errors are
/// summed, the time is the longest slave's, throughput is the summed bytes over that time.
/// `missing` names the slaves without results (the sum is then not comparable).
[[nodiscard]] SideComparison compare_master_with_slaves(const RunReport& report);

}  // namespace volley::report
