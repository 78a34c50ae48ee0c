// The CPU, NIC and kernel counter tables of the final report: per side (master, then each
// slave).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "text_layout.hpp"
#include "text_sections.hpp"
#include "volley/report/service_demand.hpp"
#include "volley/report/units_format.hpp"

namespace volley::report::detail {
namespace {

constexpr std::size_t kHostLabel = 10;
constexpr std::size_t kNicLabel = 16;
constexpr std::size_t kCounterLabel = 28;
constexpr std::size_t kCountWidth = 14;

std::vector<const SideReport*> sides(const RunReport& report) {
  std::vector<const SideReport*> out = {&report.master};
  for (const SideReport& s : report.slaves) out.push_back(&s);
  return out;
}

std::string pct(double v) { return fmt::format("{:.1f}", v); }

std::string maybe(const std::optional<double>& v, int decimals) {
  return v ? fmt::format("{:.{}f}", *v, decimals) : "-";
}

std::string cpu_row(const SideReport& side, const Totals& master_timed) {
  if (!side.cpu) return labelled_row(side.host, kHostLabel, "  (no CPU sample)");
  const sampling::CpuUsage& u = *side.cpu;
  std::string cols;
  if (u.total) {
    const auto& b = *u.total;
    cols = fmt::format("{:>6}{:>6}{:>6}{:>6}{:>6}", pct(b.usr_pct), pct(b.sys_pct), pct(b.irq_pct),
                       pct(b.softirq_pct), pct(b.busy_pct));
  } else {
    cols = fmt::format("{:>6}{:>6}{:>6}{:>6}{:>6}", "-", "-", "-", "-", "-");
  }
  cols += u.hottest ? fmt::format("{:>6}{:>6}", u.hottest->cpu, pct(u.hottest->busy_pct))
                    : fmt::format("{:>6}{:>6}", "-", "-");
  cols +=
      fmt::format("{:>6}", u.process ? fmt::format("{:.2f}", u.process->cores) : std::string("-"));
  const ServiceDemand d = service_demand(u, master_timed);
  cols += fmt::format("{:>10}{:>10}", maybe(d.process_us_per_transaction, 2),
                      maybe(d.system_us_per_transaction, 2));
  return labelled_row(side.host, kHostLabel, cols);
}

bool has_traffic(const sampling::NicRate& r) {
  return r.rx_bytes_per_s != 0 || r.tx_bytes_per_s != 0 || r.rx_packets_per_s != 0 ||
         r.tx_packets_per_s != 0;
}

std::string counter_row(std::string_view name, std::uint64_t delta) {
  return labelled_row("  " + std::string(name), kCounterLabel,
                      fmt::format("{:>{}}", fit_count(delta, kCountWidth), kCountWidth));
}

// The host's lines (none when nothing moved).
std::string host_lines(const sampling::KernelCounterDeltas& k) {
  std::string lines;
  for (const auto& [name, delta] : k.counters) {
    if (delta != 0) lines += counter_row(name, delta);
  }
  if (k.softnet) {
    const sampling::SoftnetDelta total = sampling::softnet_total(*k.softnet);
    if (total.processed != 0) lines += counter_row("softnet processed", total.processed);
    if (total.dropped != 0) lines += counter_row("softnet dropped", total.dropped);
    if (total.time_squeeze != 0) lines += counter_row("softnet time_squeeze", total.time_squeeze);
  }
  if (!k.went_backwards.empty()) {
    lines += fmt::format("  went backwards (no delta): {}\n", fmt::join(k.went_backwards, ", "));
  }
  return lines;
}

}  // namespace

std::string cpu_section(const RunReport& report) {
  const Totals master_timed = timed_totals(report.master.result, report.timed_steps);
  std::string body;
  for (const SideReport* s : sides(report)) {
    if (s->cpu || s == &report.master) body += cpu_row(*s, master_timed);
  }
  // Service demand: CPU us per master transaction, of this process and of the whole host.
  return fmt::format("{:<40}{:>12}{:>6}{:>20}\n", "CPU, timed part (% of all CPUs)", "Hottest CPU",
                     "Proc", "us/txn service") +
         fmt::format("{:<10}{:>6}{:>6}{:>6}{:>6}{:>6}{:>6}{:>6}{:>6}{:>10}{:>10}\n", "Host", "usr%",
                     "sys%", "irq%", "sirq%", "busy%", "cpu", "busy%", "cores", "process",
                     "system") +
         body;
}

std::string nic_section(const RunReport& report) {
  std::string body;
  for (const SideReport* s : sides(report)) {
    if (!s->nic) continue;
    body += s->host + "\n";
    for (const auto& [name, r] : s->nic->interfaces) {
      if (name != "lo" && !has_traffic(r)) continue;
      body += labelled_row(
          "  " + name, kNicLabel,
          fmt::format("{:>9}{:>9}{:>11}{:>11}{:>9}{:>9}", format_count(r.rx_packets_per_s),
                      format_count(r.tx_packets_per_s), format_bits_per_s(r.rx_bits_per_s),
                      format_bits_per_s(r.tx_bits_per_s),
                      format_count(r.rx_drops_per_s + r.tx_drops_per_s),
                      format_count(r.rx_errors_per_s + r.tx_errors_per_s)));
    }
  }
  if (body.empty()) return {};
  return "NIC, timed part (interfaces with traffic, and lo)\n" +
         fmt::format("{:<{}}{:>9}{:>9}{:>11}{:>11}{:>9}{:>9}\n", "Host/interface", kNicLabel,
                     "Rx pkt/s", "Tx pkt/s", "Rx bit/s", "Tx bit/s", "Drops/s", "Errs/s") +
         body;
}

std::string kernel_section(const RunReport& report) {
  std::string body;
  for (const SideReport* s : sides(report)) {
    if (!s->kernel) continue;
    const std::string lines = host_lines(*s->kernel);
    if (!lines.empty()) body += s->host + "\n" + lines;
  }
  if (body.empty()) return {};
  return "Kernel counters, timed part (those that moved)\n" +
         labelled_row("Host/counter", kCounterLabel, fmt::format("{:>{}}", "Delta", kCountWidth)) +
         body;
}

}  // namespace volley::report::detail
