#include "volley/report/comparison.hpp"

namespace volley::report {

std::optional<double> difference_pct(double master, double slave) {
  if (master == 0) {
    if (slave == 0) return 0.0;
    return std::nullopt;
  }
  return (master - slave) / master * 100.0;
}

SideComparison compare_with_master(const RunReport& report, std::size_t slave) {
  const SideReport& side = report.slaves.at(slave);
  SideComparison c;
  c.host = side.host;
  c.master = timed_totals(report.master.result, report.timed_steps);
  c.slave = timed_totals(side.result, report.timed_steps);
  const auto d = [](std::uint64_t m, std::uint64_t s) {
    return difference_pct(static_cast<double>(m), static_cast<double>(s));
  };
  c.seconds_difference_pct = difference_pct(c.master.seconds, c.slave.seconds);
  c.bytes_difference_pct = d(c.master.bytes, c.slave.bytes);
  c.bits_per_s_difference_pct = difference_pct(c.master.bits_per_s(), c.slave.bits_per_s());
  c.ops_difference_pct = d(c.master.ops, c.slave.ops);
  c.errors_difference_pct = d(c.master.error_total(), c.slave.error_total());
  return c;
}

}  // namespace volley::report
