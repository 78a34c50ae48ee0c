#include "volley/report/uperf_raw_lines.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "volley/report/uperf_output.hpp"

namespace volley::report {
namespace {

constexpr std::int64_t kNsPerMs = 1'000'000;

/// When step `k` was released on the master: the engine's window once the results are in, the
/// live record before; 0 when unknown.
std::int64_t step_start(const RunReport& report, std::size_t k) {
  const auto& w = report.master.result.windows;
  if (k < w.size() && w[k].start_unix_ns != 0) return w[k].start_unix_ns;
  return k < report.master_steps.size() ? report.master_steps[k].released_unix_ns : 0;
}

/// When step `k` ended on the master, likewise; 0 when it has not (or never ran).
std::int64_t step_end(const RunReport& report, std::size_t k) {
  const auto& w = report.master.result.windows;
  if (k < w.size() && w[k].start_unix_ns != 0) return w[k].start_unix_ns + w[k].elapsed.count();
  return k < report.master_steps.size() ? report.master_steps[k].ended_unix_ns : 0;
}

/// Step `k`'s counters over the whole run from the master's results (every group's transaction
/// `k`): what its intervals add up to, and all there is when the run had none.
std::pair<std::uint64_t, std::uint64_t> step_totals(const RunReport& report, std::size_t k) {
  results::SlotCounters sum;
  for (const results::GroupResult& g : report.master.result.groups) {
    if (k < g.transactions.size()) sum.merge(flowop_counters(g.transactions[k]));
  }
  return {sum.bytes(), sum.ops};
}

}  // namespace

std::string UperfRawLines::interval(const RunReport& report, const IntervalSample& sample) {
  std::string out = start_line_end(report);
  if (!lines_) return out;
  const std::size_t steps = track_steps(report);
  add_counts(report, sample);
  const std::int64_t end_ns = sample.start_unix_ns + sample.length.count();
  for (; next_ < steps && next_ <= sample.step; ++next_) {
    out += open(report, next_, sample.start_unix_ns);
    if (next_ == sample.step) {
      out += emit(next_, end_ns, end_ns);
      break;  // still running: its last line comes with a later interval or the end
    }
    const std::int64_t ended = step_end(report, next_);
    out += emit(next_, ended != 0 ? ended : end_ns, end_ns) + "\n";
  }
  return out;
}

std::string UperfRawLines::finish(const RunReport& report) {
  std::string out = start_line_end(report);
  if (!lines_) return out;
  const std::size_t steps = track_steps(report);
  const std::int64_t run_end = uperf_run_end_ns(report);
  // Steps that ended after the last interval, or ran between two intervals without one.
  for (; next_ < steps; ++next_) {
    if (const std::int64_t ended = step_end(report, next_); ended != 0) {
      if (!report.master.result.groups.empty()) {
        const auto [bytes, ops] = step_totals(report, next_);
        cumulative_[next_] = Counts{bytes, ops};
      }
      out += open(report, next_, ended);
      out += emit(next_, ended, run_end);
    }
    if (!last_[next_]) break;  // never released: the run stopped before it
    out += "\n";
  }
  const Totals total = all_totals(report.master.result);
  return out + uperf_rule() + format_uperf_raw_line(run_end, "Total", total.bytes, total.ops);
}

std::string UperfRawLines::start_line_end(const RunReport& report) {
  if (started_line_ended_) return "";
  started_line_ended_ = true;
  const std::int64_t first = step_start(report, 0);
  const double seconds =
      first > started_unix_ns_ ? static_cast<double>(first - started_unix_ns_) / 1e9 : 0;
  return format_uperf_setup_time(seconds);
}

std::size_t UperfRawLines::track_steps(const RunReport& report) {
  std::size_t steps = std::max(report.master.result.windows.size(), report.master_steps.size());
  for (const SlotName& s : report.slot_names) steps = std::max(steps, s.txn + 1);
  if (steps > cumulative_.size()) {
    cumulative_.resize(steps);
    last_.resize(steps);
  }
  return cumulative_.size();
}

void UperfRawLines::add_counts(const RunReport& report, const IntervalSample& sample) {
  // sample.txns has one row per transaction slot, in slot order, with its flowops' operations
  // and bytes already added up.
  std::size_t k = 0;
  for (const SlotName& name : report.slot_names) {
    if (name.flowop || name.uncorrected) continue;
    if (k >= sample.txns.size()) break;
    const IntervalTxnCounters& row = sample.txns[k++];
    if (name.txn >= cumulative_.size()) continue;
    cumulative_[name.txn].bytes += row.bytes;
    cumulative_[name.txn].ops += row.ops;
  }
}

std::string UperfRawLines::open(const RunReport& report, std::size_t step,
                                std::int64_t fallback_ns) {
  if (last_[step]) return "";
  const std::int64_t start = step_start(report, step);
  last_[step] = Line{start != 0 ? start : fallback_ns, Counts{}};
  return format_uperf_raw_line(last_[step]->unix_ns, fmt::format("Txn{}", step + 1), 0, 0);
}

std::string UperfRawLines::emit(std::size_t step, std::int64_t unix_ns, std::int64_t later_ns) {
  const Counts& counts = cumulative_[step];
  if (const std::optional<Line>& last = last_[step]) {
    const std::int64_t last_ms = last->unix_ns / kNsPerMs;
    if (unix_ns / kNsPerMs <= last_ms) {
      if (counts == last->counts) return "";
      // Counted after the previous line (the end-of-step drain) though stamped before it.
      if (unix_ns < last->unix_ns) unix_ns = later_ns;
      if (unix_ns / kNsPerMs <= last_ms) unix_ns = (last_ms + 1) * kNsPerMs;
    }
  }
  last_[step] = Line{unix_ns, counts};
  return format_uperf_raw_line(unix_ns, fmt::format("Txn{}", step + 1), counts.bytes, counts.ops);
}

}  // namespace volley::report
