#include "volley/report/result_checks.hpp"

#include <algorithm>
#include <initializer_list>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "volley/report/comparison.hpp"
#include "volley/core/grouped_count.hpp"
#include "volley/report/units_format.hpp"

namespace volley::report {
namespace {

constexpr std::string_view kAllowEmpty = " (--allow-empty accepts that)";

std::string txn_name(const results::GroupResult& g, std::size_t step) {
  const std::string& name = g.transactions[step].name;
  return name.empty() ? fmt::format("txn{}", step) : name;
}

/// A timed step where no group completed an iteration, then a group that completed none of one
/// of its transactions.
std::string find_empty_work(const RunReport& report) {
  const results::RunResult& r = report.master.result;
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

/// Errors that can leave bytes in flight (a reset, a peer that closed, a timeout...): those
/// that found no connection at all (not_connected: its connect had failed; addr_unavailable: a
/// connect with no local port) moved nothing, and excuse nothing.
std::uint64_t errors_losing_bytes(const Totals& t) {
  std::uint64_t n = t.error_total();
  for (const auto kind :
       {results::ErrorKind::kNotConnected, results::ErrorKind::kAddrUnavailable}) {
    n -= t.errors[static_cast<std::size_t>(kind)];
  }
  return n;
}

/// The byte rule, per slave and per step (transaction index): what the master wrote to the slave
/// in that step the slave read, and what the slave wrote the master read, exactly. The
/// end-of-step drain makes this hold however the step ended, cut included: each side reads what
/// the other wrote before the next step starts. It covers the streams (TCP) only, UDP included
/// in the same profile or not: datagrams are lost by design, and find_datagram_excess checks
/// them. Excused: a step in which either side counted an error that can lose bytes on its
/// streams (canfail lets a run go on after a reset, or after a timed-out operation that left its
/// stream mid-message, and the bytes then lost are not a counting fault), and a missing slave
/// (its absence already failed the run).
std::string find_byte_disagreement(const RunReport& report) {
  std::size_t steps = report.master.result.windows.size();
  for (const auto& g : report.master.result.groups) steps = std::max(steps, g.transactions.size());
  for (const SideReport& slave : report.slaves) {
    if (!slave.missing.empty()) continue;
    for (std::size_t step = 0; step < steps; ++step) {
      const std::vector<std::size_t> only{step};
      const Totals master = master_share(report, slave.host, &only, Traffic::kStreams);
      const Totals theirs = timed_totals(slave.result, only, Traffic::kStreams);
      if (errors_losing_bytes(master) != 0 || errors_losing_bytes(theirs) != 0) continue;
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

/// The datagram rule, per UDP flowop: the receiving side cannot have counted more distinct
/// datagrams than the sending side sent (duplicates are counted apart). Fewer is loss, which the
/// report shows; more is a counting fault. Its peers are found by peer_flowop().
std::string find_datagram_excess(const RunReport& report) {
  const results::RunResult& master = report.master.result;
  for (const SideReport& s : report.slaves) {
    if (!s.missing.empty()) return {};  // the peers' counts are incomplete
  }
  for (std::size_t g = 0; g < master.groups.size(); ++g) {
    for (std::size_t t = 0; t < master.groups[g].transactions.size(); ++t) {
      const auto& flowops = master.groups[g].transactions[t].flowops;
      for (std::size_t f = 0; f < flowops.size(); ++f) {
        const results::DatagramCounters& mine = flowops[f].stats.counters.datagrams;
        const results::DatagramCounters theirs = peer_datagrams(report, g, t, f);
        const auto excess = [&](const results::DatagramCounters& sender,
                                const results::DatagramCounters& receiver, std::string_view way) {
          if (receiver.received <= sender.sent) return std::string();
          return fmt::format(
              "datagrams disagree in group '{}' step {} flowop {} ({}): {} sent, {} received",
              master.groups[g].name, t, f, way, sender.sent, receiver.received);
        };
        if (auto problem = excess(mine, theirs, "master to slaves"); !problem.empty())
          return problem;
        if (auto problem = excess(theirs, mine, "slaves to master"); !problem.empty())
          return problem;
      }
    }
  }
  return {};
}

/// The first disagreement `check(slave, g, t, f, mine, theirs)` finds between a master's flowop
/// and its peer flowop on a slave (peer_flowop), over every slave that answered and every step
/// without a duration on either side that `counted(slave, t)` keeps: the walk the connection and
/// operations rules share.
template <class Counted, class Check>
std::string first_peer_disagreement(const RunReport& report, Counted counted, Check check) {
  const results::RunResult& master = report.master.result;
  for (const SideReport& slave : report.slaves) {
    if (!slave.missing.empty()) continue;
    for (std::size_t g = 0; g < master.groups.size() && g < slave.result.groups.size(); ++g) {
      const auto& txns = master.groups[g].transactions;
      for (std::size_t t = 0; t < txns.size() && t < slave.result.groups[g].transactions.size();
           ++t) {
        if (t < master.windows.size() && master.windows[t].is_duration) continue;
        if (t < slave.result.windows.size() && slave.result.windows[t].is_duration) continue;
        if (!counted(slave, t)) continue;
        const auto& theirs = slave.result.groups[g].transactions[t].flowops;
        for (std::size_t f = 0; f < txns[t].flowops.size(); ++f) {
          const auto at = peer_flowop(report, slave.host, g, t, f);
          if (!at || *at >= theirs.size()) continue;
          std::string problem = check(slave, g, t, f, txns[t].flowops[f], theirs[*at]);
          if (!problem.empty()) return problem;
        }
      }
    }
  }
  return {};
}

/// The connection rule, per slave, per connect or accept flowop, in steps without a duration:
/// the connections one side opened are the ones its peer's mirror took. A profile that moves no
/// bytes (connect, then disconnect) gives the byte rule nothing to catch, so without this rule a
/// slave whose mirror missed connections the kernel completed for the master would leave it "ok".
/// Failures (canfail) are accounted, not excused: a connect that failed opened nothing the peer
/// could take (its header never went whole), and an accept that failed did take a connection
/// (setting its options failed), so the connects' operations equal the accepts' operations plus
/// the accepts' errors, exactly. Excused: a timed-out connect or accept (the connection may still
/// have come, or gone, after the timeout), a missing slave, and a step bounded by time, whose cut
/// may end a connect after the peer accepted it.
std::string find_connection_disagreement(const RunReport& report) {
  const auto is_connection = [](const std::string& type) {
    return type == "connect" || type == "accept";
  };
  return first_peer_disagreement(
      report, [](const SideReport&, std::size_t) { return true; },
      [&](const SideReport& slave, std::size_t g, std::size_t t, std::size_t f,
          const results::FlowopResult& mine, const results::FlowopResult& peer) -> std::string {
        if (!is_connection(mine.type) || !is_connection(peer.type)) return {};
        const results::SlotCounters& a = mine.stats.counters;
        const results::SlotCounters& b = peer.stats.counters;
        constexpr auto kTimedOut = static_cast<std::size_t>(results::ErrorKind::kTimedOut);
        if (a.errors[kTimedOut] != 0 || b.errors[kTimedOut] != 0) return {};
        const bool master_connects = mine.type == "connect";
        const results::SlotCounters& acceptor = master_connects ? b : a;
        const std::uint64_t connected = master_connects ? a.ops : b.ops;
        if (connected == acceptor.ops + acceptor.error_total()) return {};
        const auto failed = [](const results::SlotCounters& c) {
          return c.error_total() == 0 ? std::string()
                                      : fmt::format(" and failed {} time(s)", c.error_total());
        };
        return fmt::format(
            "connections disagree with slave {} in step {}: group '{}' flowop {} ({}) opened {}{} "
            "and the slave's {} took {}{}",
            slave.host, t, report.master.result.groups[g].name, f, mine.type, a.ops, failed(a),
            peer.type, b.ops, failed(b));
      });
}
/// The operations rule, per slave, per step without a duration, per TCP flowop other than
/// connect, accept (the connection rule's), think and nop: the master's flowop completed as many
/// operations as its peer on the slave, exactly. In such a step both sides run every iteration;
/// a failed execution is an operation on neither side. It catches what the byte rule cannot: in
/// a profile that moves no bytes (uperf's canfail.xml), a slave whose mirror was cut in its
/// disconnect step (a strand starved of CPU under load) ends operations short. Excused as the byte
/// rule is: a step with errors that can lose bytes on either side (a timeout's or a reset's
/// stream may end an iteration early on one side only), a missing slave.
std::string find_operation_disagreement(const RunReport& report) {
  return first_peer_disagreement(
      report,
      [&](const SideReport& slave, std::size_t t) {
        const std::vector<std::size_t> only{t};
        return errors_losing_bytes(master_share(report, slave.host, &only, Traffic::kStreams)) ==
                   0 &&
               errors_losing_bytes(timed_totals(slave.result, only, Traffic::kStreams)) == 0;
      },
      [&](const SideReport& slave, std::size_t g, std::size_t t, std::size_t f,
          const results::FlowopResult& mine, const results::FlowopResult& peer) -> std::string {
        if (mine.type == "connect" || mine.type == "accept" || mine.type == "think" ||
            mine.type == "nop") {
          return {};
        }
        const results::SlotCounters& a = mine.stats.counters;
        const results::SlotCounters& b = peer.stats.counters;
        if (a.datagrams.any() || b.datagrams.any() || a.ops == b.ops) return {};
        return fmt::format(
            "operations disagree with slave {} in step {}: group '{}' flowop {} ({}) completed "
            "{} and the slave's {} completed {} ({} cut on the master, {} on the slave)",
            slave.host, t, report.master.result.groups[g].name, f, mine.type, a.ops, peer.type,
            b.ops, a.expired, b.expired);
      });
}

/// The rate rule, per paced transaction of the master (rate=, bound by a duration): its strands
/// completed the iterations their schedules asked for within the step (intended starts before
/// its end), all but at most kPacedSlackPerStrand per strand and kPacedSlackPct percent of them.
std::string find_paced_shortfall(const RunReport& report) {
  const results::RunResult& r = report.master.result;
  for (std::size_t g = 0; g < r.groups.size(); ++g) {
    const results::GroupResult& group = r.groups[g];
    for (std::size_t t = 0; t < group.transactions.size(); ++t) {
      const results::SlotCounters& c = group.transactions[t].stats.counters;
      if (!paced_fell_behind(c.scheduled, c.ops, group.strands)) continue;
      return fmt::format(
          "group {} transaction {} fell behind its rate: {} of {} scheduled iterations ({:.1f}%)",
          g, t, core::format_grouped(c.ops), core::format_grouped(c.scheduled),
          100.0 * static_cast<double>(c.ops) / static_cast<double>(c.scheduled));
    }
  }
  return {};
}
}  // namespace

bool paced_fell_behind(std::uint64_t scheduled, std::uint64_t done, std::uint64_t strands) {
  if (done >= scheduled) return false;
  const std::uint64_t slack = strands * kPacedSlackPerStrand + scheduled * kPacedSlackPct / 100;
  return scheduled - done > slack;
}

std::string find_stopped_strands(const RunReport& report) {
  const auto stopped = [](const std::string& side, const results::RunResult& r) -> std::string {
    if (r.failed_strands == 0) return {};
    const auto first = std::find_if(r.error_samples.begin(), r.error_samples.end(),
                                    [](const results::ErrorSample& e) { return e.stopped; });
    return fmt::format("{} strand(s) of {} stopped on an error of a flowop without canfail{}",
                       r.failed_strands, side,
                       first == r.error_samples.end()
                           ? std::string()
                           : fmt::format(", first {}: {}", first->where, first->message));
  };
  if (std::string problem = stopped("the master", report.master.result); !problem.empty()) {
    return problem;
  }
  for (const SideReport& slave : report.slaves) {
    if (!slave.missing.empty()) continue;
    if (std::string problem = stopped("slave " + slave.host, slave.result); !problem.empty()) {
      return problem;
    }
  }
  return {};
}

std::string failed_operations_by_kind(const RunReport& report) {
  std::vector<std::string> sides;
  const auto add = [&sides](const std::string& side, const results::RunResult& r) {
    const Totals t = all_totals(r);
    std::vector<std::string> kinds;
    for (std::size_t k = 0; k < results::kErrorKindCount; ++k) {
      if (t.errors[k] == 0) continue;
      kinds.push_back(fmt::format("{} {}", results::to_string(static_cast<results::ErrorKind>(k)),
                                  t.errors[k]));
    }
    if (!kinds.empty()) sides.push_back(fmt::format("{}: {}", side, fmt::join(kinds, ", ")));
  };
  add("master", report.master.result);
  for (const SideReport& slave : report.slaves) {
    if (slave.missing.empty()) add("slave " + slave.host, slave.result);
  }
  return fmt::format("{}", fmt::join(sides, "; "));
}

std::string find_result_problem(const RunReport& report, bool allow_empty) {
  if (!allow_empty) {
    if (std::string problem = find_empty_work(report); !problem.empty()) return problem;
  }
  if (std::string problem = find_byte_disagreement(report); !problem.empty()) return problem;
  if (std::string problem = find_connection_disagreement(report); !problem.empty()) return problem;
  if (std::string problem = find_operation_disagreement(report); !problem.empty()) return problem;
  if (std::string problem = find_datagram_excess(report); !problem.empty()) return problem;
  return find_paced_shortfall(report);
}

void judge(RunReport& report, bool allow_empty) {
  if (report.status != RunStatus::kOk) return;
  std::string problem = find_stopped_strands(report);
  if (problem.empty()) problem = find_result_problem(report, allow_empty);
  if (problem.empty()) return;
  report.status = RunStatus::kFailed;
  report.failure = std::move(problem);
}

}  // namespace volley::report
