#include "volley/report/result_checks.hpp"

#include <algorithm>

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

/// The byte rule, per slave and per step (transaction index): what the master wrote to the slave
/// in that step the slave read, and what the slave wrote the master read, exactly. The
/// end-of-step drain makes this hold however the step ended, cut included: each side reads what
/// the other wrote before the next step starts. Excused: a step in which either side counted an
/// error on that traffic (canfail lets a run go on after a reset, or after a timed-out operation
/// that left its stream mid-message, and the bytes then lost are not a counting fault), and a
/// missing slave (its absence already failed the run).
std::string find_byte_disagreement(const RunReport& report) {
  std::size_t steps = report.master.result.windows.size();
  for (const auto& g : report.master.result.groups) steps = std::max(steps, g.transactions.size());
  for (const SideReport& slave : report.slaves) {
    if (!slave.missing.empty()) continue;
    for (std::size_t step = 0; step < steps; ++step) {
      const std::vector<std::size_t> only{step};
      const Totals master = master_share(report, slave.host, &only);
      const Totals theirs = timed_totals(slave.result, only);
      if (master.error_total() != 0 || theirs.error_total() != 0) continue;
      if (theirs.bytes_read != master.bytes_written) {
        return fmt::format(
            "bytes disagree with slave {} in step {}: the master wrote {} bytes to it and it "
            "read {}",
            slave.host, step, master.bytes_written, theirs.bytes_read);
      }
      if (master.bytes_read != theirs.bytes_written) {
        return fmt::format(
            "bytes disagree with slave {} in step {}: it wrote {} bytes and the master read {}",
            slave.host, step, theirs.bytes_written, master.bytes_read);
      }
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
