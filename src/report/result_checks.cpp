#include "volley/report/result_checks.hpp"

#include <fmt/format.h>

#include "volley/report/comparison.hpp"

namespace volley::report {
namespace {

constexpr std::string_view kAllowEmpty = " (--allow-empty accepts that)";

std::string txn_name(const engine::GroupResult& g, std::size_t step) {
  const std::string& name = g.transactions[step].name;
  return name.empty() ? fmt::format("txn{}", step) : name;
}

/// A timed step where no group completed an iteration, then a group that completed none of one
/// of its transactions.
std::string find_empty_work(const RunReport& report) {
  const engine::RunResult& r = report.master.result;
  for (const std::size_t step : report.timed_steps) {
    std::uint64_t transactions = 0;
    bool any_group = false;
    for (const auto& g : r.groups) {
      if (g.strands == 0 || step >= g.transactions.size()) continue;
      any_group = true;
      transactions += g.transactions[step].stats.counters.ops;
    }
    if (any_group && transactions == 0) {
      return fmt::format("timed step {} completed 0 transactions{}", step, kAllowEmpty);
    }
  }
  for (const auto& g : r.groups) {
    if (g.strands == 0) continue;
    for (std::size_t step = 0; step < g.transactions.size(); ++step) {
      if (g.transactions[step].stats.counters.ops != 0) continue;
      return fmt::format("group '{}' completed no iteration of transaction '{}' (step {}){}",
                         g.name, txn_name(g, step), step, kAllowEmpty);
    }
  }
  return {};
}

bool carries_datagrams(const engine::RunResult& r) {
  for (const auto& g : r.groups) {
    for (const auto& t : g.transactions) {
      for (const auto& f : t.flowops) {
        if (f.stats.counters.datagrams.any()) return true;
      }
    }
  }
  return false;
}

/// The byte rule, per slave, over all steps: what the master wrote to the slave, the slave read,
/// exactly; what the slave wrote, the master read, exactly, or, when some master operation on
/// that slave's traffic was cut by the end of a step (expired), at most that (the bytes in
/// flight when the read was cut are never read). Skipped when either side counted errors
/// (canfail lets a run go on after a reset, and the bytes then lost are not a counting fault), and
/// when UDP was used.
std::string find_byte_disagreement(const RunReport& report) {
  for (const SideReport& slave : report.slaves) {
    if (!slave.missing.empty()) continue;
    // UDP loses datagrams by design: what arrived is reported (the datagram section), not failed.
    if (carries_datagrams(report.master.result) || carries_datagrams(slave.result)) continue;
    const Totals master = master_share(report, slave.host, nullptr);
    const Totals theirs = all_totals(slave.result);
    if (master.error_total() != 0 || theirs.error_total() != 0) continue;
    if (theirs.bytes_read != master.bytes_written) {
      return fmt::format(
          "bytes disagree with slave {}: the master wrote {} bytes to it and it read {}",
          slave.host, master.bytes_written, theirs.bytes_read);
    }
    const bool cut = master.expired != 0;
    if (master.bytes_read > theirs.bytes_written ||
        (!cut && master.bytes_read != theirs.bytes_written)) {
      return fmt::format(
          "bytes disagree with slave {}: it wrote {} bytes and the master read {}{}", slave.host,
          theirs.bytes_written, master.bytes_read,
          master.bytes_read > theirs.bytes_written
              ? " (more than was written)"
              : " (with no operation of the master cut at the end of a step to explain it)");
    }
  }
  return {};
}

}  // namespace

std::string find_result_problem(const RunReport& report, bool allow_empty) {
  if (!allow_empty) {
    if (std::string problem = find_empty_work(report); !problem.empty()) return problem;
  }
  return find_byte_disagreement(report);
}

}  // namespace volley::report
