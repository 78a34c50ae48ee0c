#include "volley/report/service_demand.hpp"

namespace volley::report {
namespace {

std::optional<double> per(std::optional<double> cpu_us, double units) {
  if (!cpu_us || units <= 0) return std::nullopt;
  return *cpu_us / units;
}

}  // namespace

ServiceDemand service_demand(const sampling::CpuUsage& cpu, const Totals& master_timed) {
  std::optional<double> process_us;
  if (cpu.process) process_us = (cpu.process->user_s + cpu.process->sys_s) * 1e6;
  std::optional<double> system_us;
  if (cpu.total && !cpu.per_cpu.empty()) {
    system_us =
        cpu.total->busy_pct / 100.0 * static_cast<double>(cpu.per_cpu.size()) * cpu.wall_s * 1e6;
  }
  const auto transactions = static_cast<double>(master_timed.transactions);
  const double kb = static_cast<double>(master_timed.bytes) / 1024.0;
  ServiceDemand d;
  d.process_us_per_transaction = per(process_us, transactions);
  d.system_us_per_transaction = per(system_us, transactions);
  d.process_us_per_kb = per(process_us, kb);
  d.system_us_per_kb = per(system_us, kb);
  return d;
}

}  // namespace volley::report
