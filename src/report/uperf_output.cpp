#include "volley/report/uperf_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <vector>

#include "uperf_format.hpp"
#include "volley/report/comparison.hpp"

namespace volley::report {
namespace detail {

std::string uperf_time(double ns, int width) {
  static constexpr std::string_view kPrefix = "num";
  std::size_t index = 0;
  while (ns >= 1000.0 && index < kPrefix.size()) {
    ++index;
    ns /= 1000.0;
  }
  const std::string text = index == kPrefix.size()
                               ? fmt::format("{:{}.2f}s", ns, width - 1)
                               : fmt::format("{:{}.2f}{}s", ns, width - 2, kPrefix[index]);
  return fmt::format("{:>{}} ", text, width);
}

std::string uperf_missing(int width) { return fmt::format("{:>{}} ", "-", width); }

}  // namespace detail

namespace {

using detail::uperf_time;

// uperf draws its rules one column short of the window, 80 columns when stdout is not a tty
// (which is how wrappers run it).
constexpr std::size_t kRuleWidth = 79;

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// uperf's decimal_to_string(): 1024-based bytes ("56.34MB"), 1000-based bits ("64.65Mb/s"), a
/// plain "0" for zero. Like uperf, it steps up only when the value is above the divisor.
std::string uperf_decimal(double value, bool bits) {
  static constexpr std::string_view kSuffix = " KMGTPEZ";
  if (value == 0) return "0";
  const double div = bits ? 1000.0 : 1024.0;
  std::size_t pos = 0;
  while (value > div && pos + 1 < kSuffix.size()) {
    value /= div;
    ++pos;
  }
  const std::string_view unit = bits ? "b/s" : "B";
  if (pos == 0) return fmt::format("{:.2f}{}", value, unit);
  return fmt::format("{:.2f}{}{}", value, kSuffix[pos], unit);
}

/// uperf's print_decimal(): right-aligned in `width`, then a blank.
std::string uperf_number(double value, int width, bool bits) {
  return fmt::format("{:>{}} ", uperf_decimal(value, bits), width);
}

/// uperf's name for group `index`: its name attribute (lower-cased, as uperf reads the whole
/// profile) or `Group0`.
std::string group_name(const results::GroupResult& group, std::size_t index) {
  if (group.name.empty() || group.name == fmt::format("group{}", index)) {
    return fmt::format("Group{}", index);
  }
  return lower(group.name);
}

std::string details_section(std::string_view title, const std::string& body) {
  return fmt::format("\n{}\n{}{}\n", title, uperf_rule(), body);
}

std::string group_details(const RunReport& report) {
  const std::int64_t end = uperf_run_end_ns(report);
  std::string body;
  const auto& groups = report.master.result.groups;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    results::SlotCounters sum;
    for (const results::TxnResult& txn : groups[g].transactions) sum.merge(flowop_counters(txn));
    body += format_uperf_raw_line(end, group_name(groups[g], g), sum.bytes(), sum.ops);
  }
  return details_section("Group Details", body);
}

/// uperf's -T: one line per strand of each group, named as uperf names its threads (Thr0.. within
/// each group), stamped like the group lines with the run's end.
std::string strand_details(const RunReport& report) {
  const std::int64_t end = uperf_run_end_ns(report);
  std::string body;
  for (const results::GroupResult& group : report.master.result.groups) {
    for (std::size_t s = 0; s < group.strand_counts.size(); ++s) {
      const results::StrandCounts& c = group.strand_counts[s];
      body += format_uperf_raw_line(end, fmt::format("Thr{}", s), c.bytes, c.ops);
    }
  }
  return details_section("Strand Details", body);
}

std::string netstat(const RunReport& report) {
  std::string out = "\nNetstat statistics for this run\n" + uperf_rule();
  out += fmt::format("{:<5}  {:>10}  {:>10}  {:>11}  {:>11}\n", "Nic", "opkts/s", "ipkts/s",
                     "obits/s", "ibits/s");
  if (report.master.nic) {
    for (const auto& [nic, rate] : report.master.nic->interfaces) {
      if (rate.tx_packets_per_s == 0 && rate.rx_packets_per_s == 0) continue;
      out += fmt::format("{:<5}  {:>10.0f}  {:>10.0f}  ", nic, rate.tx_packets_per_s,
                         rate.rx_packets_per_s);
      out += uperf_number(rate.tx_bits_per_s, 11, true) + " " +
             uperf_number(rate.rx_bits_per_s, 11, true) + "\n";
    }
  }
  return out + uperf_rule();
}

/// One side over the whole run, as uperf's goodbye statistics count it: every step, bytes in
/// both directions, flowop executions, and errors as a percentage of them.
struct SideFigures {
  double seconds = 0;
  std::uint64_t bytes = 0;
  std::uint64_t ops = 0;
  std::uint64_t errors = 0;
  [[nodiscard]] double bits_per_s() const {
    return seconds > 0 ? 8.0 * static_cast<double>(bytes) / seconds : 0;
  }
  [[nodiscard]] double error_pct() const {
    return ops > 0 ? 100.0 * static_cast<double>(errors) / static_cast<double>(ops) : 0;
  }
};

SideFigures side_figures(const results::RunResult& result) {
  const Totals t = all_totals(result);
  return {t.seconds, t.bytes, t.ops, t.error_total()};
}

std::string statistics_row(std::string_view host, const SideFigures& f) {
  return fmt::format("{:<15.15} ", host) + uperf_time(f.seconds * 1e9, 8) +
         uperf_number(static_cast<double>(f.bytes), 10, false) +
         uperf_number(f.bits_per_s(), 12, true) +
         fmt::format("{:>12} {:>11.2f}\n", f.ops, f.error_pct());
}

std::string pct(std::optional<double> value, int width) {
  return value ? fmt::format("{:>{}.2f}%", *value, width) : fmt::format("{:>{}}%", "-", width);
}

std::string run_statistics(const RunReport& report) {
  std::string out =
      "\nRun Statistics\nHostname            Time       Data   Throughput   Operations      "
      "Errors\n" +
      uperf_rule();
  SideFigures slaves;
  for (const SideReport& side : report.slaves) {
    const SideFigures f = side_figures(side.result);
    out += statistics_row(side.host, f);
    slaves.seconds = std::max(slaves.seconds, f.seconds);
    slaves.bytes += f.bytes;
    slaves.ops += f.ops;
    slaves.errors += f.errors;
  }
  if (report.slaves.size() > 1) out += statistics_row("Total", slaves);
  const SideFigures master = side_figures(report.master.result);
  out += statistics_row("master", master);
  if (report.slaves.empty()) return out;
  const auto diff = [](double m, double s) { return difference_pct(m, s); };
  out += uperf_rule();
  out += fmt::format(
      "{:<15} {} {} {} {} {}\n\n", "Difference(%)", pct(diff(master.seconds, slaves.seconds), 7),
      pct(diff(static_cast<double>(master.bytes), static_cast<double>(slaves.bytes)), 9),
      pct(diff(master.bits_per_s(), slaves.bits_per_s()), 11),
      pct(diff(static_cast<double>(master.ops), static_cast<double>(slaves.ops)), 11),
      pct(std::max(master.error_pct(), slaves.error_pct()), 10));
  return out;
}

}  // namespace

std::string uperf_rule() { return std::string(kRuleWidth, '-') + "\n"; }

std::int64_t uperf_run_end_ns(const RunReport& report) {
  std::int64_t end = report.start_unix_ns + report.duration.count();
  for (const results::TxnWindow& w : report.master.result.windows) {
    if (w.start_unix_ns != 0) end = std::max(end, w.start_unix_ns + w.elapsed.count());
  }
  return end;
}

UperfSections uperf_sections(std::string_view letters) {
  UperfSections s;
  for (const char c : letters) {
    switch (c) {
      case 'R': s.raw = true; break;
      case 'g': s.groups = true; break;
      case 'T': s.strands = true; break;
      case 't': s.transactions = true; break;
      case 'f':
      case 'p':
      case 'e':
      case 'E': s.flowops = true; break;
      case 'k': s.netstat = true; break;
      case 'n':
        // uperf: copt = NO_STATS, so only what follows -n counts, and the interval and Total
        // lines stay off whatever follows.
        s = UperfSections{};
        s.stats = s.netstat = s.run_statistics = false;
        break;
      case 'a':
        s.groups = s.strands = s.transactions = s.flowops = s.netstat = s.run_statistics = true;
        break;
      default: break;
    }
  }
  return s;
}

std::string format_uperf_start(std::string_view profile_name, std::uint64_t threads,
                               std::uint64_t processes) {
  const std::string name = lower(profile_name);
  if (threads == 0 && processes != 0) {
    return fmt::format("Starting {} processes running profile:{} ... ", processes, name);
  }
  if (processes == 0)
    return fmt::format("Starting {} threads running profile:{} ... ", threads, name);
  return fmt::format("Starting {} threads, {} processes running profile:{} ... ", threads,
                     processes, name);
}

std::string format_uperf_setup_time(double seconds) {
  return fmt::format(" {:5.2f} seconds\n", seconds);
}

std::string format_uperf_raw_line(std::int64_t unix_ns, std::string_view name, std::uint64_t bytes,
                                  std::uint64_t ops) {
  const std::int64_t ns = std::max<std::int64_t>(unix_ns, 0);
  return fmt::format("timestamp_ms:{}.{:04} name:{} nr_bytes:{} nr_ops:{}\n", ns / 1'000'000,
                     (ns % 1'000'000) / 100, name, bytes, ops);
}

std::string format_uperf_report(const RunReport& report, const UperfSections& sections) {
  std::string out;
  if (sections.groups) out += group_details(report);
  if (sections.strands) out += strand_details(report);
  if (sections.transactions) out += detail::uperf_transaction_averages(report);
  if (sections.flowops) out += detail::uperf_flowop_averages(report);
  if (sections.netstat) out += netstat(report);
  if (sections.run_statistics) out += run_statistics(report);
  return out;
}

}  // namespace volley::report
