#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <string_view>
#include <vector>

#include "text_layout.hpp"
#include "text_sections.hpp"
#include "volley/report/json_report.hpp"
#include "volley/report/result_checks.hpp"
#include "volley/report/text_report.hpp"
#include "volley/core/grouped_count.hpp"
#include "volley/report/units_format.hpp"

namespace volley::report {
namespace detail {
namespace {

/// `items` joined with ", " after `head`, wrapped before 80 columns with `indent` spaces.
std::string wrapped_list(std::string head, const std::vector<std::string>& items,
                         std::size_t indent) {
  std::string out;
  std::string line = std::move(head);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string piece = items[i] + (i + 1 < items.size() ? "," : "");
    if (line.size() + 1 + piece.size() > 79 && line.size() > indent) {
      out += line + "\n";
      line = std::string(indent, ' ') + piece;
    } else {
      line += (line.empty() || line.back() == ' ' ? "" : " ") + piece;
    }
  }
  return out + line + "\n";
}

/// `text`'s words after `head`, wrapped before 80 columns with `indent` spaces.
std::string wrapped_words(std::string head, std::string_view text, std::size_t indent) {
  std::string out;
  std::string line = std::move(head);
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find(' ', at), text.size());
    const std::string_view word = text.substr(at, end - at);
    at = end + 1;
    if (line.size() + 1 + word.size() > 79 && line.size() > indent) {
      out += line + "\n";
      line = std::string(indent, ' ');
      line += word;
    } else {
      line += ' ';
      line += word;
    }
  }
  return out + line + "\n";
}

/// One side's first errors, one line each, a run of the same error folded into its first line.
std::string first_errors(const std::string& side,
                         const std::vector<results::ErrorSample>& samples) {
  if (samples.empty()) return {};
  std::string out = fmt::format("  first errors{}:\n", side);
  std::string last;
  std::size_t repeated = 0;
  const auto fold = [&] {
    if (repeated > 0) out += fmt::format("      (and {} more like it)\n", repeated);
    repeated = 0;
  };
  for (const auto& s : samples) {
    std::string line =
        fmt::format("    {}: {}{}\n", s.where, s.message, s.stopped ? " (stopped its strand)" : "");
    if (line == last) {
      ++repeated;
      continue;
    }
    fold();
    out += line;
    last = std::move(line);
  }
  fold();
  return out;
}

std::string steps_text(const std::vector<std::size_t>& steps) {
  if (steps.empty()) return "none";
  return fmt::format("{}", fmt::join(steps, " "));
}

}  // namespace

std::string run_header_section(const RunReport& report) {
  std::string out = fmt::format("volley {}  profile {}\n", report.volley_version,
                                report.profile_name.empty() ? "-" : report.profile_name);
  if (!report.profile_path.empty()) out += fmt::format("  file {}\n", report.profile_path);
  out += fmt::format("  status {}  started {}  duration {:.2f}s\n", to_string(report.status),
                     report.start_unix_ns != 0 ? iso8601_utc_ms(report.start_unix_ns) : "-",
                     std::chrono::duration<double>(report.duration).count());
  out += fmt::format("  workers {}  io {}  seed {}  timed steps {}\n", report.workers,
                     report.master.io.empty() ? "-" : report.master.io, report.seed,
                     steps_text(report.timed_steps));
  if (report.start_at_unix_ns) {
    const auto offset = start_offset_ns(report);
    out += fmt::format(
        "  start at {}: timed part {}\n", iso8601_utc_ms(*report.start_at_unix_ns),
        offset ? fmt::format("began {:+.3f} ms from it", static_cast<double>(*offset) / 1e6)
               : std::string("did not begin"));
  }
  if (!report.failure.empty()) out += fmt::format("  failure: {}\n", report.failure);
  // Failed operations, whoever counted them: an "ok" run with failures is ok only because
  // canfail allowed them, and that must be read here, not pieced together from the tables.
  if (const std::string failed = failed_operations_by_kind(report); !failed.empty()) {
    out += wrapped_words(report.status == RunStatus::kOk
                             ? "  failed operations, allowed by canfail (all steps):"
                             : "  failed operations (all steps):",
                         failed, 4);
  }
  out += first_errors("", report.master.result.error_samples);
  for (const auto& slave : report.slaves) {
    out += first_errors(", slave " + slave.host, slave.result.error_samples);
  }
  return out;
}

namespace {
/// The end-of-step drain's per-connection check over the timed steps: on how many connections
/// the slaves read exactly what the master wrote, and the master what the slaves wrote. Empty
/// when no connection was written on.
std::string read_exactly_line(const RunReport& report) {
  const auto count = [&report](const results::RunResult& side) {
    std::uint64_t n = 0;
    for (const std::size_t step : report.timed_steps) {
      if (step < side.windows.size()) n += side.windows[step].connections_read_exactly;
    }
    return n;
  };
  std::uint64_t by_slaves = 0;
  for (const auto& slave : report.slaves) by_slaves += count(slave.result);
  const std::uint64_t by_master = count(report.master.result);
  if (by_slaves == 0 && by_master == 0) return {};
  return fmt::format("  read exactly  on {} connections by the slave{}, {} by the master\n",
                     by_slaves, report.slaves.size() == 1 ? "" : "s", by_master);
}
/// Each paced transaction of the master with a schedule in a duration step: the iterations its
/// strands completed of those their schedules asked for within the step (the rate rule's
/// figures, docs/results.md). Empty without any.
std::string paced_lines(const results::RunResult& master) {
  std::string out;
  for (std::size_t g = 0; g < master.groups.size(); ++g) {
    const auto& txns = master.groups[g].transactions;
    for (std::size_t t = 0; t < txns.size(); ++t) {
      const results::SlotCounters& c = txns[t].stats.counters;
      if (c.scheduled == 0) continue;
      out += fmt::format(
          "  paced         group {} transaction {}: {} of {} scheduled iterations ({:.1f}%)\n", g,
          t, core::format_grouped(c.ops), core::format_grouped(c.scheduled),
          100.0 * static_cast<double>(c.ops) / static_cast<double>(c.scheduled));
    }
  }
  return out;
}
}  // namespace

std::string totals_section(const RunReport& report) {
  const Totals t = timed_totals(report.master.result, report.timed_steps);
  const results::RunResult& r = report.master.result;
  std::string out = fmt::format("Totals, master, timed steps {} ({:.2f}s, set-up excluded)\n",
                                steps_text(report.timed_steps), t.seconds);
  out += fmt::format("  transactions  {:>14}  {:>9} txn/s\n", t.transactions,
                     format_count(t.transactions_per_s()));
  out += fmt::format("  operations    {:>14}  {:>9} op/s  (flowop executions)\n", t.ops,
                     format_count(t.ops_per_s()));
  out += fmt::format("  data          {:>14}  {:>9}  (read + written)\n", format_bytes(t.bytes),
                     format_bits_per_s(t.bits_per_s()));
  out += fmt::format("  connections   requested {}, established {}\n", r.connections_requested,
                     r.connections_established);
  // Resident growth per connection, each side (0 connections: nothing to divide by).
  std::vector<std::string> memory;
  const auto add_memory = [&memory](const std::string& who, const results::RunResult& side) {
    if (side.processes.empty() || side.connections_established == 0) return;
    memory.push_back(fmt::format("{} {:.0f} B/connection ({} process{})", who,
                                 results::memory_per_connection(side), side.processes.size(),
                                 side.processes.size() == 1 ? "" : "es"));
  };
  add_memory("master", r);
  for (const auto& slave : report.slaves) add_memory("slave " + slave.host, slave.result);
  if (!memory.empty()) out += fmt::format("  memory        {}\n", fmt::join(memory, "; "));
  out += read_exactly_line(report);
  out += paced_lines(r);
  std::vector<std::string> kinds;
  for (std::size_t k = 0; k < results::kErrorKindCount; ++k) {
    if (t.errors[k] == 0) continue;
    kinds.push_back(
        fmt::format("{} {}", results::to_string(static_cast<results::ErrorKind>(k)), t.errors[k]));
  }
  if (kinds.empty()) {
    out += "  errors 0\n";
  } else {
    out += wrapped_list(fmt::format("  errors {}:", t.error_total()), kinds, 4);
  }
  out += fmt::format("  expired {}\n", t.expired);
  const Totals all = all_totals(r);
  out += fmt::format("  all steps: {} transactions, {} operations, {} in {:.2f}s\n",
                     all.transactions, all.ops, format_bytes(all.bytes), all.seconds);
  return out;
}

}  // namespace detail

std::string format_final_report(const RunReport& report) {
  const std::vector<std::string> sections = {detail::run_header_section(report),
                                             detail::transactions_section(report),
                                             detail::flowops_section(report),
                                             detail::flowop_latency_section(report),
                                             detail::datagram_section(report),
                                             detail::tls_section(report),
                                             detail::zerocopy_section(report),
                                             detail::totals_section(report),
                                             detail::cpu_section(report),
                                             detail::nic_section(report),
                                             detail::kernel_section(report),
                                             detail::tcp_section(report),
                                             detail::run_statistics_section(report),
                                             detail::bottleneck_section(report)};
  std::string out;
  for (const std::string& s : sections) {
    if (s.empty()) continue;
    if (!out.empty()) out += '\n';
    out += s;
  }
  return out;
}

}  // namespace volley::report
