#include "volley/report/bottleneck.hpp"

#include <array>

#include <fmt/format.h>

#include "volley/report/tcp_figures.hpp"
#include "volley/report/units_format.hpp"

namespace volley::report {
namespace {

/// A count of events: whole below a thousand ("140"), then with a prefix ("3.42k").
std::string events(std::uint64_t n) {
  return n < 1000 ? fmt::format("{}", n) : format_count(static_cast<double>(n));
}

std::uint64_t counter(const sampling::KernelCounterDeltas& k, std::string_view name) {
  const auto it = k.counters.find(name);
  return it == k.counters.end() ? 0 : it->second;
}

void kernel_rules(const SideReport& side, std::vector<Bottleneck>& out) {
  if (!side.kernel) return;
  const sampling::KernelCounterDeltas& k = *side.kernel;
  if (const auto n = counter(k, "TcpExt.ListenOverflows"); n > 0) {
    out.push_back({BottleneckRule::kListenOverflow, side.host,
                   fmt::format("the listen queue overflowed {} times (TcpExt.ListenOverflows; "
                               "{} SYNs or connections dropped, ListenDrops)",
                               events(n), events(counter(k, "TcpExt.ListenDrops"))),
                   "raise net.core.somaxconn and the listener's backlog, or spread the "
                   "connects over more listeners or time"});
  }
  const auto retrans = counter(k, "Tcp.RetransSegs");
  const auto sent = counter(k, "Tcp.OutSegs");
  if (sent > 0 && retrans >= kRetransmitMin &&
      100.0 * static_cast<double>(retrans) / static_cast<double>(sent) >= kRetransmitPct) {
    out.push_back({BottleneckRule::kRetransmits, side.host,
                   fmt::format("{} retransmitted segments, {:.2f}% of {} sent (Tcp.RetransSegs; "
                               "{} timeouts, TCPTimeouts)",
                               events(retrans),
                               100.0 * static_cast<double>(retrans) / static_cast<double>(sent),
                               events(sent), events(counter(k, "TcpExt.TCPTimeouts"))),
                   "loss on the path or a full queue: look at drops on both ends (NIC, qdisc, "
                   "softnet) and at the congestion control"});
  }
  if (const auto dropped = counter(k, "Udp.RcvbufErrors"); dropped > 0) {
    const double all = static_cast<double>(dropped + counter(k, "Udp.InDatagrams"));
    out.push_back({BottleneckRule::kUdpReceiveBuffer, side.host,
                   fmt::format("{} datagrams ({:.1f}% of those that arrived) dropped by a full "
                               "receive buffer (Udp.RcvbufErrors): by this host's sockets, not "
                               "the network",
                               events(dropped), 100.0 * static_cast<double>(dropped) / all),
                   "raise the receive buffer (wndsz=, net.core.rmem_max and rmem_default) or "
                   "read faster"});
  }
}

/// The first timed transaction of `side` whose connections the window (or the send buffer) held
/// back at least kTcpLimitedPct of their busy time. Each connection's counts run from its
/// opening, so a transaction is judged alone, never summed with another of the same connections.
void tcp_rules(const SideReport& side, const std::vector<std::size_t>& timed,
               std::vector<Bottleneck>& out) {
  struct Limit {
    BottleneckRule rule;
    double TcpShares::*share;
    const char* what;     ///< what held the connections back
    const char* counter;  ///< TCP_INFO's name for it
    const char* advice;
    bool found = false;
  };
  std::array<Limit, 2> limits{{
      {BottleneckRule::kReceiveWindow, &TcpShares::rwnd_limited_pct, "the receiver's window",
       "tcpi_rwnd_limited",
       "the receiver reads too slowly or its receive buffer is small: if its CPU has room, "
       "raise its receive buffer (wndsz=, net.ipv4.tcp_rmem)"},
      {BottleneckRule::kSendBuffer, &TcpShares::sndbuf_limited_pct, "the send buffer",
       "tcpi_sndbuf_limited", "raise this host's send buffer (wndsz=, net.ipv4.tcp_wmem)"},
  }};
  for (const results::GroupResult& g : side.result.groups) {
    for (const std::size_t step : timed) {
      if (step >= g.transactions.size()) continue;
      const stats::TcpSummary& tcp = g.transactions[step].stats.tcp;
      if (tcp.busy_us < kTcpBusyMinUs) continue;
      const TcpShares shares = tcp_shares(tcp);
      for (Limit& limit : limits) {
        if (limit.found || shares.*limit.share < kTcpLimitedPct) continue;
        limit.found = true;
        out.push_back({limit.rule, side.host,
                       fmt::format("{} held back the connections of {}/{} {:.0f}% of the time "
                                   "they had data to send ({} over tcpi_busy_time, {} "
                                   "connections)",
                                   limit.what, g.name, g.transactions[step].name,
                                   shares.*limit.share, limit.counter, tcp.connections()),
                       limit.advice});
      }
    }
  }
}

void cpu_rules(const SideReport& side, std::vector<Bottleneck>& out) {
  if (!side.cpu) return;
  const sampling::CpuUsage& cpu = *side.cpu;
  for (const sampling::CoreUsage& core : cpu.per_cpu) {
    const auto& u = core.usage;
    if (u.busy_pct < kSoftirqCpuBusyPct || u.softirq_pct < u.busy_pct * kSoftirqSharePct / 100) {
      continue;
    }
    out.push_back({BottleneckRule::kSoftirqCpu, side.host,
                   fmt::format("CPU {} was {:.0f}% busy, {:.0f}% in softirq (receive "
                               "processing)",
                               core.cpu, u.busy_pct, u.softirq_pct),
                   "spread receive processing over more CPUs (RPS/RFS, IRQ affinity, more "
                   "queues)"});
    break;  // one CPU says it; the JSON has them all
  }
  if (cpu.total && cpu.total->busy_pct >= kCpuFullPct) {
    out.push_back({BottleneckRule::kCpuFull, side.host,
                   fmt::format("the host's CPUs were {:.0f}% busy ({:.0f}% system, {:.0f}% "
                               "softirq, {:.0f}% user)",
                               cpu.total->busy_pct, cpu.total->sys_pct, cpu.total->softirq_pct,
                               cpu.total->usr_pct),
                   "the CPU is the limit: the rate is what these CPUs do; compare CPU per "
                   "transaction (service demand) to judge a change"});
  }
}

}  // namespace

std::string_view to_string(BottleneckRule rule) {
  switch (rule) {
    case BottleneckRule::kListenOverflow: return "listen_overflow";
    case BottleneckRule::kRetransmits: return "retransmits";
    case BottleneckRule::kUdpReceiveBuffer: return "udp_receive_buffer";
    case BottleneckRule::kReceiveWindow: return "receive_window";
    case BottleneckRule::kSendBuffer: return "send_buffer";
    case BottleneckRule::kSoftirqCpu: return "softirq_cpu";
    case BottleneckRule::kCpuFull: return "cpu_full";
  }
  return "unknown";
}

std::vector<Bottleneck> find_bottlenecks(const RunReport& report) {
  std::vector<Bottleneck> out;
  const auto judge = [&out, &report](const SideReport& side) {
    if (!side.missing.empty()) return;
    kernel_rules(side, out);
    tcp_rules(side, report.timed_steps, out);
    cpu_rules(side, out);
  };
  judge(report.master);
  for (const SideReport& slave : report.slaves) judge(slave);
  return out;
}

}  // namespace volley::report
