// The kernel counters over an interval, and their JSON form.
#include <algorithm>
#include <array>

#include <nlohmann/json.hpp>

#include "volley/sampling/kernel_counters.hpp"

namespace volley::sampling {
namespace {

// Why a run is what it is: retransmits and their causes, listen queues, receive path drops,
// out-of-order queueing; UDP datagrams dropped on full buffers or unknown ports. Tcp.OutSegs and
// Udp.InDatagrams are the totals the retransmits and the receive buffer errors are rates of.
constexpr std::array<std::string_view, 15> kWatched = {
    "Tcp.OutSegs",        "Udp.InDatagrams",
    "Tcp.RetransSegs",    "TcpExt.TCPLostRetransmit",
    "TcpExt.TCPTimeouts", "TcpExt.ListenOverflows",
    "TcpExt.ListenDrops", "TcpExt.TCPBacklogDrop",
    "TcpExt.TCPRcvQDrop", "TcpExt.TCPZeroWindowDrop",
    "TcpExt.TCPOFOQueue", "Udp.InErrors",
    "Udp.RcvbufErrors",   "Udp.SndbufErrors",
    "Udp.NoPorts"};

// The kernel's softnet counters are 32-bit and wrap: the difference modulo 2^32.
std::uint64_t delta32(std::uint32_t before, std::uint32_t after) {
  return static_cast<std::uint32_t>(after - before);
}

std::vector<SoftnetDelta> softnet_deltas(const std::vector<SoftnetCpu>& before,
                                         const std::vector<SoftnetCpu>& after) {
  std::vector<SoftnetDelta> out;
  for (const SoftnetCpu& now : after) {
    const auto it = std::find_if(before.begin(), before.end(),
                                 [&now](const SoftnetCpu& c) { return c.cpu == now.cpu; });
    if (it == before.end()) continue;
    out.push_back(SoftnetDelta{now.cpu, delta32(it->processed, now.processed),
                               delta32(it->dropped, now.dropped),
                               delta32(it->time_squeeze, now.time_squeeze)});
  }
  std::sort(out.begin(), out.end(),
            [](const SoftnetDelta& a, const SoftnetDelta& b) { return a.cpu < b.cpu; });
  return out;
}

nlohmann::json softnet_json(const SoftnetDelta& d) {
  return nlohmann::json{
      {"processed", d.processed}, {"dropped", d.dropped}, {"time_squeeze", d.time_squeeze}};
}

}  // namespace

std::span<const std::string_view> watched_protocol_counters() { return kWatched; }

KernelCounterDeltas kernel_counter_deltas(const KernelSample& before, const KernelSample& after) {
  KernelCounterDeltas d;
  d.wall_s = std::max(0.0, std::chrono::duration<double>(after.taken - before.taken).count());
  for (const std::string_view name : kWatched) {
    const auto old = before.protocol.find(name);
    const auto now = after.protocol.find(name);
    if (old == before.protocol.end() || now == after.protocol.end()) {
      d.absent.emplace_back(name);
    } else if (now->second < old->second) {
      d.went_backwards.emplace_back(name);
    } else {
      d.counters.emplace(std::string(name), now->second - old->second);
    }
  }
  if (before.softnet && after.softnet) d.softnet = softnet_deltas(*before.softnet, *after.softnet);
  for (const auto* sample : {&before, &after}) {
    for (const std::string& p : sample->problems) {
      if (std::find(d.problems.begin(), d.problems.end(), p) == d.problems.end()) {
        d.problems.push_back(p);
      }
    }
  }
  return d;
}

SoftnetDelta softnet_total(const std::vector<SoftnetDelta>& per_cpu) {
  SoftnetDelta total;
  for (const SoftnetDelta& c : per_cpu) {
    total.processed += c.processed;
    total.dropped += c.dropped;
    total.time_squeeze += c.time_squeeze;
  }
  return total;
}

ProtocolCounterMap moved_counters(const KernelCounterDeltas& d) {
  ProtocolCounterMap moved;
  for (const auto& [name, value] : d.counters) {
    if (value != 0) moved.emplace(name, value);
  }
  if (d.softnet) {
    const SoftnetDelta total = softnet_total(*d.softnet);
    if (total.processed != 0) moved.emplace("softnet.processed", total.processed);
    if (total.dropped != 0) moved.emplace("softnet.dropped", total.dropped);
    if (total.time_squeeze != 0) moved.emplace("softnet.time_squeeze", total.time_squeeze);
  }
  return moved;
}

void to_json(nlohmann::json& j, const KernelCounterDeltas& d) {
  j = nlohmann::json::object();
  j["wall_s"] = d.wall_s;
  j["counters"] = nlohmann::json::object();
  for (const auto& [name, value] : d.counters) j["counters"][name] = value;
  j["absent"] = d.absent;
  j["went_backwards"] = d.went_backwards;
  if (d.softnet) {
    nlohmann::json softnet = softnet_json(softnet_total(*d.softnet));
    nlohmann::json cpus = nlohmann::json::array();
    for (const SoftnetDelta& c : *d.softnet) {
      nlohmann::json cpu = softnet_json(c);
      cpu["cpu"] = c.cpu;
      cpus.push_back(std::move(cpu));
    }
    softnet["per_cpu"] = std::move(cpus);
    j["softnet"] = std::move(softnet);
  } else {
    j["softnet"] = nullptr;
  }
  j["problems"] = d.problems;
}

}  // namespace volley::sampling
