#include <fmt/format.h>

#include <chrono>

#include "volley/report/interval_rows.hpp"
#include "volley/report/text_report.hpp"
#include "volley/report/units_format.hpp"

namespace volley::report {
namespace {

/// How long step `sample.step` has been running at the end of `sample`: from the step's window
/// when the result has it, else from the start of the first interval of that step.
double step_seconds(const RunReport& report, const IntervalSample& sample) {
  const std::int64_t end_ns = sample.start_unix_ns + sample.length.count();
  const auto& windows = report.master.result.windows;
  if (sample.step < windows.size() && windows[sample.step].start_unix_ns != 0) {
    return static_cast<double>(end_ns - windows[sample.step].start_unix_ns) / 1e9;
  }
  std::int64_t first_ns = sample.start_unix_ns;
  for (const IntervalSample& s : report.intervals) {
    if (s.step == sample.step && s.start_unix_ns < first_ns) first_ns = s.start_unix_ns;
  }
  return static_cast<double>(end_ns - first_ns) / 1e9;
}

/// Errors below 1000 exactly, then with a prefix ("1.23k").
std::string compact_count(std::uint64_t n) {
  return n < 1000 ? fmt::format("{}", n) : format_count(static_cast<double>(n));
}

}  // namespace

std::string format_interval_line(const RunReport& report, const IntervalSample& sample) {
  std::string name;
  std::uint64_t transactions = 0;
  std::uint64_t ops = 0;
  std::uint64_t bytes = 0;
  std::uint64_t errors = 0;
  std::uint64_t handshakes = 0;  // TLS, within the ops
  // UDP, both sides, each direction apart (datagram_ways).
  IntervalTxnRow udp;
  double seconds = 0;
  for (const IntervalTxnRow& row : interval_txn_rows(report, sample)) {
    if (row.txn != sample.step) continue;
    // Several groups running the step show as one line named after the step.
    name = name.empty() || name == row.txn_name ? row.txn_name : fmt::format("step{}", row.txn);
    transactions += row.transactions;
    ops += row.ops;
    bytes += row.bytes;
    errors += row.errors;
    handshakes += row.handshakes;
    udp.datagrams.merge(row.datagrams);
    udp.peer_datagrams.merge(row.peer_datagrams);
    udp.peers = row.peers;
    seconds = row.seconds;
  }
  if (name.empty()) name = fmt::format("step{}", sample.step);
  const auto rate = [&](std::uint64_t n) {
    return seconds > 0 ? static_cast<double>(n) / seconds : 0.0;
  };
  std::string line =
      fmt::format("{:<6} {:>6} {:>7} txn/s {:>7} op/s {:>9} p50 {:>6} p99 {:>6} err {}", name,
                  fmt::format("{:.2f}s", step_seconds(report, sample)),
                  format_count(rate(transactions)), format_count(rate(ops)),
                  format_bits_per_s(8.0 * rate(bytes)), format_ns(sample.step_latency.p50_ns),
                  format_ns(sample.step_latency.p99_ns), compact_count(errors));
  if (handshakes != 0) line += fmt::format(" tls {} hs/s", format_count(rate(handshakes)));
  // UDP: per direction, what the sender sent beside what arrived at the receiver in this
  // interval; a side whose counts did not come says so instead of showing zeros.
  for (const DatagramWay& w : datagram_ways(udp)) {
    line += fmt::format(" udp {} sent {}", w.way(), w.sent ? compact_count(*w.sent) : "?");
    if (!w.receiver) {
      line += " rcvd ? (slave counts missing)";
      continue;
    }
    const results::DatagramCounters& r = *w.receiver;
    const std::int64_t lost = interval_lost(r);
    line += fmt::format(" rcvd {} lost {}{} ({:.2f}%) late {} dup {} jitter {}",
                        compact_count(r.received), lost < 0 ? "-" : "",
                        compact_count(static_cast<std::uint64_t>(lost < 0 ? -lost : lost)),
                        interval_loss_pct(r), compact_count(r.late), compact_count(r.duplicates),
                        format_ns(r.jitter_ns));
  }
  return line;
}

}  // namespace volley::report
