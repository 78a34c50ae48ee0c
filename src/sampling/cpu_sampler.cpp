#include "volley/sampling/cpu_sampler.hpp"

#include <sys/resource.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "volley/sampling/text_file.hpp"

namespace volley::sampling {
namespace {

// Parses the numbers after a "cpu"/"cpuN" label; needs at least user nice system idle.
std::optional<CpuTimes> parse_cpu_fields(const std::vector<std::string_view>& fields) {
  if (fields.size() < 5) return std::nullopt;
  std::uint64_t values[8] = {};
  const std::size_t n = std::min<std::size_t>(fields.size() - 1, 8);
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = parse_u64(fields[i + 1]);
    if (!v) return std::nullopt;
    values[i] = *v;
  }
  return CpuTimes{values[0], values[1], values[2], values[3],
                  values[4], values[5], values[6], values[7]};
}

std::uint64_t delta(std::uint64_t before, std::uint64_t after) {
  return after > before ? after - before : 0;
}

double seconds(std::chrono::microseconds us) { return std::chrono::duration<double>(us).count(); }

}  // namespace

std::uint64_t CpuTimes::total() const {
  return user + nice + system + idle + iowait + irq + softirq + steal;
}

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
  std::optional<CpuTimes> total;
  std::vector<PerCpuTimes> per_cpu;
  for (const auto line : split_lines(text)) {
    const auto fields = split_fields(line);
    if (fields.empty() || !fields[0].starts_with("cpu")) continue;
    const auto label = fields[0].substr(3);
    const auto times = parse_cpu_fields(fields);
    if (!times) continue;
    if (label.empty()) {
      total = times;
    } else if (const auto cpu = parse_u64(label); cpu && *cpu <= 0xFFFFFFFFu) {
      per_cpu.push_back(PerCpuTimes{static_cast<unsigned>(*cpu), *times});
    }
  }
  if (!total) return std::nullopt;
  std::sort(per_cpu.begin(), per_cpu.end(),
            [](const PerCpuTimes& a, const PerCpuTimes& b) { return a.cpu < b.cpu; });
  return ProcStat{*total, std::move(per_cpu)};
}

std::optional<ProcessCpuTimes> read_process_cpu() {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return std::nullopt;
  const auto to_us = [](const timeval& tv) {
    return std::chrono::seconds(tv.tv_sec) + std::chrono::microseconds(tv.tv_usec);
  };
  return ProcessCpuTimes{to_us(usage.ru_utime), to_us(usage.ru_stime)};
}

CpuSample sample_cpu(const std::filesystem::path& root) {
  CpuSample sample;
  if (const auto text = read_text_file(root / "proc/stat")) sample.host = parse_proc_stat(*text);
  sample.process = read_process_cpu();
  sample.taken = std::chrono::steady_clock::now();
  return sample;
}

CpuBreakdown cpu_breakdown(const CpuTimes& before, const CpuTimes& after) {
  const auto user = delta(before.user, after.user) + delta(before.nice, after.nice);
  const auto system = delta(before.system, after.system);
  const auto idle = delta(before.idle, after.idle);
  const auto iowait = delta(before.iowait, after.iowait);
  const auto irq = delta(before.irq, after.irq);
  const auto softirq = delta(before.softirq, after.softirq);
  const auto steal = delta(before.steal, after.steal);
  const auto total = user + system + idle + iowait + irq + softirq + steal;
  CpuBreakdown b;
  if (total == 0) return b;
  const auto pct = [total](std::uint64_t ticks) {
    return 100.0 * static_cast<double>(ticks) / static_cast<double>(total);
  };
  b.usr_pct = pct(user);
  b.sys_pct = pct(system);
  b.irq_pct = pct(irq);
  b.softirq_pct = pct(softirq);
  b.iowait_pct = pct(iowait);
  b.steal_pct = pct(steal);
  b.idle_pct = pct(idle);
  b.busy_pct = pct(total - idle - iowait);
  return b;
}

CpuUsage cpu_usage(const CpuSample& before, const CpuSample& after) {
  CpuUsage u;
  u.wall_s = std::max(0.0, std::chrono::duration<double>(after.taken - before.taken).count());
  if (before.host && after.host) {
    u.total = cpu_breakdown(before.host->total, after.host->total);
    auto old_cpus = before.host->per_cpu;  // sorted copy: samples built by hand may be unsorted
    std::sort(old_cpus.begin(), old_cpus.end(),
              [](const PerCpuTimes& a, const PerCpuTimes& b) { return a.cpu < b.cpu; });
    for (const auto& now : after.host->per_cpu) {
      const auto it =
          std::lower_bound(old_cpus.begin(), old_cpus.end(), now.cpu,
                           [](const PerCpuTimes& c, unsigned cpu) { return c.cpu < cpu; });
      if (it == old_cpus.end() || it->cpu != now.cpu) continue;
      u.per_cpu.push_back(CoreUsage{now.cpu, cpu_breakdown(it->times, now.times)});
    }
    std::sort(u.per_cpu.begin(), u.per_cpu.end(),
              [](const CoreUsage& a, const CoreUsage& b) { return a.cpu < b.cpu; });
    for (const auto& core : u.per_cpu) {
      if (!u.hottest || core.usage.busy_pct > u.hottest->busy_pct) {
        u.hottest = HottestCore{core.cpu, core.usage.busy_pct};
      }
    }
  }
  if (before.process && after.process) {
    ProcessUsage p;
    const auto user = after.process->user - before.process->user;
    const auto system = after.process->system - before.process->system;
    p.user_s = std::max(0.0, seconds(user));
    p.sys_s = std::max(0.0, seconds(system));
    if (u.wall_s > 0) {
      p.cores = (p.user_s + p.sys_s) / u.wall_s;
      p.core_pct = 100.0 * p.cores;
    }
    u.process = p;
  }
  return u;
}

void to_json(nlohmann::json& j, const CpuBreakdown& b) {
  j = nlohmann::json{{"usr_pct", b.usr_pct},       {"sys_pct", b.sys_pct},
                     {"irq_pct", b.irq_pct},       {"softirq_pct", b.softirq_pct},
                     {"iowait_pct", b.iowait_pct}, {"steal_pct", b.steal_pct},
                     {"idle_pct", b.idle_pct},     {"busy_pct", b.busy_pct}};
}

void to_json(nlohmann::json& j, const CpuUsage& u) {
  j = nlohmann::json::object();
  j["wall_s"] = u.wall_s;
  j["total"] = u.total ? nlohmann::json(*u.total) : nlohmann::json(nullptr);
  nlohmann::json cores = nlohmann::json::array();
  for (const auto& c : u.per_cpu) {
    nlohmann::json core = c.usage;
    core["cpu"] = c.cpu;
    cores.push_back(std::move(core));
  }
  j["per_cpu"] = std::move(cores);
  j["hottest_cpu"] =
      u.hottest ? nlohmann::json{{"cpu", u.hottest->cpu}, {"busy_pct", u.hottest->busy_pct}}
                : nlohmann::json(nullptr);
  j["process"] = u.process ? nlohmann::json{{"user_s", u.process->user_s},
                                            {"sys_s", u.process->sys_s},
                                            {"core_pct", u.process->core_pct},
                                            {"cores", u.process->cores}}
                           : nlohmann::json(nullptr);
}

}  // namespace volley::sampling
