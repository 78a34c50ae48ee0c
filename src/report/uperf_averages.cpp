// uperf's averages tables (-t, -f): count, mean latency, CPU per execution, max and min.
#include <fmt/format.h>

#include <optional>
#include <string_view>

#include "uperf_format.hpp"
#include "volley/report/uperf_output.hpp"

namespace volley::report::detail {
namespace {

/// The master's CPU per flowop execution in step `step`, ns: the process's CPU time over the step
/// (MasterStep::cpu_s) divided by the step's flowop executions, every group's. volley does not
/// measure each flowop's own CPU (uperf meant to, and prints 0 on Linux): this is the step's
/// mean, the same for every flowop of the step. nullopt when unknown or nothing was executed.
std::optional<double> cpu_per_op_ns(const RunReport& report, std::size_t step) {
  if (step >= report.master_steps.size() || !report.master_steps[step].cpu_s) return std::nullopt;
  std::uint64_t ops = 0;
  for (const results::GroupResult& g : report.master.result.groups) {
    if (step < g.transactions.size()) ops += flowop_counters(g.transactions[step]).ops;
  }
  if (ops == 0) return std::nullopt;
  return *report.master_steps[step].cpu_s * 1e9 / static_cast<double>(ops);
}

/// A transaction's CPU per iteration: its flowops' share of the step's CPU over its iterations.
std::optional<double> cpu_per_iteration_ns(const RunReport& report, std::size_t step,
                                           const results::TxnResult& txn) {
  const std::optional<double> per_op = cpu_per_op_ns(report, step);
  if (!per_op || txn.stats.counters.ops == 0) return std::nullopt;
  return *per_op * static_cast<double>(flowop_counters(txn).ops) /
         static_cast<double>(txn.stats.counters.ops);
}

std::string average_row(std::string_view name, const results::SlotStats& stats,
                        std::optional<double> cpu_ns) {
  const stats::LatencyHistogram& latency = stats.latency;
  const bool timed = latency.count() > 0;  // none with --no-latency
  std::string row = fmt::format("{:<15} {:>8} ", name, stats.counters.ops);
  row += timed ? uperf_time(latency.mean(), 11) : uperf_missing(11);
  row += cpu_ns ? uperf_time(*cpu_ns, 11) : uperf_missing(11);
  if (!timed) return row + uperf_missing(11) + uperf_missing(11) + "\n";
  return row + uperf_time(static_cast<double>(latency.max()), 11) +
         uperf_time(static_cast<double>(latency.min()), 11) + "\n";
}

std::string averages_header(std::string_view label) {
  return fmt::format("\n{:<15} {}\n{}", label,
                     "   Count         avg         cpu         max         min ", uperf_rule());
}

}  // namespace

std::string uperf_transaction_averages(const RunReport& report) {
  std::string out = averages_header("Txn");
  for (const results::GroupResult& group : report.master.result.groups) {
    for (std::size_t t = 0; t < group.transactions.size(); ++t) {
      const results::TxnResult& txn = group.transactions[t];
      if (txn.stats.counters.ops == 0) continue;
      out += average_row(fmt::format("Txn{}", t), txn.stats, cpu_per_iteration_ns(report, t, txn));
    }
  }
  return out + "\n";
}

std::string uperf_flowop_averages(const RunReport& report) {
  std::string out = averages_header("Flowop");
  for (const results::GroupResult& group : report.master.result.groups) {
    for (std::size_t t = 0; t < group.transactions.size(); ++t) {
      const std::optional<double> cpu_ns = cpu_per_op_ns(report, t);
      for (const results::FlowopResult& flowop : group.transactions[t].flowops) {
        if (flowop.stats.counters.ops == 0) continue;
        out += average_row(flowop.type, flowop.stats, cpu_ns);
      }
    }
  }
  return out + "\n";
}

}  // namespace volley::report::detail
