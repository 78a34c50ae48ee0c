#pragma once
// A hand-built RunReport with known figures, shared by the report tests.
//
// Master: group "g0" (4 strands): step 0 "connect", step 1 "rr" (paced: write 1 KiB + read 1 KiB,
// 1000 iterations, 2 resets, 3 expired), step 2 "disconnect"; group "g1" (1 strand): step 0
// "idle", step 1 "stream" (500 x 64 KiB writes). Windows: 1 s, 5 s (the timed step), 0.5 s.
// Timed totals: 1500 transactions, 2500 operations, 34,816,000 bytes over 5 s.
// Slave "slave1": mirror image with 10 fewer reads and 1% fewer bytes.
// CPU: 4 CPUs, 50% busy over 5 s; the master process used 2 CPU seconds.
// Intervals: two in step 1 (the second a stall of g0/rr), one in step 2.
#include <chrono>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "volley/report/run_report.hpp"

namespace volley::report::testing {

inline constexpr std::int64_t kStartUnixNs = 1'700'000'000'123'456'789;  // 2023-11-14T22:13:20.123Z
inline constexpr std::uint64_t kKiB = 1024;

/// A report's text, a line each (without the newlines).
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline results::SlotStats slot(std::uint64_t ops, std::uint64_t read, std::uint64_t written,
                               std::uint64_t latency_ns) {
  results::SlotStats s;
  s.counters.ops = ops;
  s.counters.bytes_read = read;
  s.counters.bytes_written = written;
  s.latency.record_n(latency_ns, ops);
  return s;
}

inline results::TxnResult txn(std::string name, results::SlotStats stats,
                              std::vector<results::FlowopResult> flowops) {
  results::TxnResult t;
  t.name = std::move(name);
  t.stats = std::move(stats);
  t.flowops = std::move(flowops);
  return t;
}

/// One side's result; `slave` swaps reads and writes and loses 10 reads and 1% of the bytes.
inline results::RunResult make_result(bool slave) {
  results::RunResult r;
  const std::uint64_t reads = slave ? 990 : 1000;
  results::GroupResult g0;
  g0.name = "g0";
  g0.strands = 4;
  g0.transactions.push_back(
      txn("connect", slot(4, 0, 0, 400'000), {{"connect", slot(4, 0, 0, 393'000)}}));
  results::SlotStats rr;
  rr.counters.ops = 1000;
  rr.latency.record_n(20'000, 900);
  rr.latency.record_n(50'000, 90);
  rr.latency.record_n(1'000'000, 10);
  results::TxnResult t1 =
      txn("rr", std::move(rr),
          {{slave ? "read" : "write",
            slot(slave ? reads : 1000, slave ? 1000 * kKiB : 0, slave ? 0 : 1000 * kKiB, 5'000)},
           {slave ? "write" : "read",
            slot(slave ? 1000 : reads, slave ? 0 : 1000 * kKiB, slave ? 1000 * kKiB : 0, 12'000)}});
  if (!slave) {
    t1.flowops[1].stats.counters.errors[static_cast<std::size_t>(results::ErrorKind::kReset)] = 2;
    t1.flowops[1].stats.counters.expired = 3;
    stats::LatencyHistogram uncorrected;
    uncorrected.record_n(15'000, 1000);
    t1.uncorrected_latency = std::move(uncorrected);
  }
  g0.transactions.push_back(std::move(t1));
  g0.transactions.push_back(
      txn("disconnect", slot(4, 0, 0, 30'000), {{"disconnect", slot(4, 0, 0, 29'000)}}));
  results::GroupResult g1;
  g1.name = "g1";
  g1.strands = 1;
  g1.transactions.push_back(
      txn("idle", slot(1, 0, 0, 1'000'000), {{"connect", slot(1, 0, 0, 900'000)}}));
  const std::uint64_t stream_bytes = slave ? 500 * 64 * kKiB - 348'160 : 500 * 64 * kKiB;
  g1.transactions.push_back(
      txn("stream", slot(500, 0, 0, 100'000),
          {{slave ? "read" : "write",
            slot(500, slave ? stream_bytes : 0, slave ? 0 : stream_bytes, 99'000)}}));
  r.groups = {std::move(g0), std::move(g1)};
  using std::chrono::milliseconds;
  r.windows = {{kStartUnixNs, milliseconds(1000), false},
               {kStartUnixNs + 1'000'000'000, milliseconds(5000), true},
               {kStartUnixNs + 6'000'000'000, milliseconds(500), false}};
  r.connections_requested = 5;
  r.connections_established = 5;
  return r;
}

/// 4 CPUs over 5 s: cpu0 fully busy, 50% busy overall; the process used 1.5 s user + 0.5 s sys
/// (or nothing known about the process when `with_process` is false).
inline sampling::CpuUsage make_cpu(bool with_process) {
  sampling::CpuSample before;
  sampling::CpuSample after;
  after.taken = before.taken + std::chrono::seconds(5);
  sampling::ProcStat b;
  sampling::ProcStat a;
  b.total = {};
  a.total.user = 150;
  a.total.system = 50;
  a.total.idle = 200;
  for (unsigned c = 0; c < 4; ++c) {
    b.per_cpu.push_back({c, {}});
    sampling::CpuTimes t;
    t.user = c == 0 ? 90 : 20;
    t.system = c == 0 ? 10 : (c == 1 ? 20 : 10);
    t.idle = c == 0 ? 0 : (c == 1 ? 60 : 70);
    a.per_cpu.push_back({c, t});
  }
  before.host = b;
  after.host = a;
  if (with_process) {
    before.process = sampling::ProcessCpuTimes{};
    after.process = sampling::ProcessCpuTimes{std::chrono::microseconds(1'500'000),
                                              std::chrono::microseconds(500'000)};
  }
  return sampling::cpu_usage(before, after);
}

inline sampling::NicRates make_nic() {
  sampling::NicSample before;
  sampling::NicSample after;
  after.taken = before.taken + std::chrono::seconds(5);
  before.interfaces = sampling::NicCounterMap{{"eth0", {}}, {"eth1", {}}, {"lo", {}}};
  sampling::NicCounters eth0;
  eth0.rx_bytes = 5'000'000;
  eth0.rx_packets = 5000;
  eth0.tx_bytes = 10'000'000;
  eth0.tx_packets = 8000;
  eth0.rx_drops = 5;
  after.interfaces = sampling::NicCounterMap{{"eth0", eth0}, {"eth1", {}}, {"lo", {}}};
  return sampling::nic_rates(before, after);
}

/// The master's kernel counters over 5 s: two that moved, one that did not, one absent, softnet
/// on two CPUs.
inline sampling::KernelCounterDeltas make_kernel() {
  sampling::KernelSample before;
  sampling::KernelSample after;
  after.taken = before.taken + std::chrono::seconds(5);
  for (const auto& name : sampling::watched_protocol_counters()) {
    if (name == "TcpExt.TCPZeroWindowDrop") continue;
    before.protocol.emplace(std::string(name), 100);
    after.protocol.emplace(std::string(name), 100);
  }
  after.protocol["Tcp.RetransSegs"] = 142;
  after.protocol["Udp.RcvbufErrors"] = 1100;
  before.softnet = std::vector<sampling::SoftnetCpu>{{0, 10, 0, 0}, {1, 20, 0, 0}};
  after.softnet = std::vector<sampling::SoftnetCpu>{{0, 510, 0, 3}, {1, 20, 0, 0}};
  return sampling::kernel_counter_deltas(before, after);
}

inline std::vector<SlotName> make_slot_names() {
  auto n = [](std::size_t g, std::size_t t, std::optional<std::size_t> f, bool unc,
              std::string name) { return SlotName{g, t, f, unc, std::move(name), {}}; };
  return {n(0, 0, {}, false, "g0/connect"),               // 0
          n(0, 0, 0, false, "g0/connect/connect"),        // 1
          n(0, 1, {}, false, "g0/rr"),                    // 2
          n(0, 1, 0, false, "g0/rr/write"),               // 3
          n(0, 1, 1, false, "g0/rr/read"),                // 4
          n(0, 1, {}, true, "g0/rr/uncorrected"),         // 5
          n(0, 2, {}, false, "g0/disconnect"),            // 6
          n(0, 2, 0, false, "g0/disconnect/disconnect"),  // 7
          n(1, 0, {}, false, "g1/idle"),                  // 8
          n(1, 0, 0, false, "g1/idle/connect"),           // 9
          n(1, 1, {}, false, "g1/stream"),                // 10
          n(1, 1, 0, false, "g1/stream/write")};          // 11
}

/// An interval of 1 s starting at `start`, from the full slot counters (as the engine gives
/// them), kept in the compact form the series stores.
inline IntervalSample make_interval(std::int64_t start, std::size_t step,
                                    const std::vector<results::SlotStats>& slots) {
  IntervalSample s;
  s.start_unix_ns = start;
  s.since_run_start = std::chrono::nanoseconds(start - kStartUnixNs);
  s.length = std::chrono::seconds(1);
  s.step = step;
  summarize_interval(make_slot_names(), slots, s);
  return s;
}

/// One interval of step 1 in which g0/rr's read received 95 datagrams (5 lost, 2 of those late,
/// 1 duplicate, 3 timed-out reads, 1.5 us jitter) and g1/stream's write sent 100: a UDP run's
/// interval as the master counts it.
inline IntervalSample make_udp_interval() {
  std::vector<results::SlotStats> a(12);
  a[2] = slot(95, 0, 0, 20'000);
  a[4] = slot(95, 95 * kKiB, 0, 12'000);
  a[4].counters.datagrams = {0, 95, 7, 2, 1, 3, 1'500};
  a[10] = slot(100, 0, 0, 100'000);
  a[11] = slot(100, 0, 100 * kKiB, 99'000);
  a[11].counters.datagrams.sent = 100;
  return make_interval(kStartUnixNs + 1'000'000'000, 1, a);
}

/// make_udp_interval() with the slave's side of it (interval_counts): its mirror of g0/rr sent
/// 100 datagrams to the master, its mirror of g1/stream received 97 of the master's 100 (4 gaps,
/// 1 of them filled late: 3 lost; 2 us jitter).
inline IntervalSample make_udp_interval_with_slaves() {
  IntervalSample s = make_udp_interval();
  s.peers = {1, 1, ""};
  add_peer_datagrams(make_slot_names(), 0, 1, {100, 0, 0, 0, 0, 0, 0}, s);
  add_peer_datagrams(make_slot_names(), 1, 1, {0, 97, 4, 1, 0, 0, 2'000}, s);
  return s;
}

inline std::vector<IntervalSample> make_intervals() {
  // Step 1, second 1: g0/rr does 200 iterations (200 writes + 200 reads of 1 KiB), g1/stream 100.
  std::vector<results::SlotStats> a(12);
  a[2] = slot(200, 0, 0, 20'000);
  a[3] = slot(200, 0, 200 * kKiB, 5'000);
  a[4] = slot(200, 200 * kKiB, 0, 12'000);
  a[10] = slot(100, 0, 0, 100'000);
  a[11] = slot(100, 0, 100 * 64 * kKiB, 99'000);
  // Step 1, second 2: g0/rr stalls (a row of zeros), g1/stream does 50.
  std::vector<results::SlotStats> b(12);
  b[10] = slot(50, 0, 0, 100'000);
  b[11] = slot(50, 0, 50 * 64 * kKiB, 99'000);
  // Step 2 (not timed): g0/disconnect only.
  std::vector<results::SlotStats> c(12);
  c[6] = slot(4, 0, 0, 30'000);
  c[7] = slot(4, 0, 0, 29'000);
  return {make_interval(kStartUnixNs + 1'000'000'000, 1, a),
          make_interval(kStartUnixNs + 2'000'000'000, 1, b),
          make_interval(kStartUnixNs + 6'000'000'000, 2, c)};
}

inline RunReport make_report() {
  RunReport r;
  r.volley_version = "0.1.0";
  r.profile_name = "pingpong";
  r.profile_path = "profiles/pingpong.xml";
  r.profile_sha256 = std::string(64, 'a');
  r.variables = {{"h", "127.0.0.1"}, {"nthr", "4"}};
  r.command_line = {"volley", "run", "-m", "profiles/pingpong.xml"};
  r.seed = 42;
  r.workers = 2;
  r.start_unix_ns = kStartUnixNs;
  r.duration = std::chrono::milliseconds(6500);
  r.timed_steps = {1};
  r.master = {"master", "master", make_result(false), make_cpu(true), make_nic(), make_kernel(),
              nullptr,  {}};
  r.slaves.push_back({"slave",
                      "slave1",
                      make_result(true),
                      make_cpu(false),
                      std::nullopt,
                      std::nullopt,
                      nullptr,
                      {}});
  r.slot_names = make_slot_names();
  r.intervals = make_intervals();
  return r;
}

}  // namespace volley::report::testing
