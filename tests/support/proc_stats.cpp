#include "support/proc_stats.hpp"

#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

namespace volley::test {

using Clock = std::chrono::steady_clock;

std::optional<ProcStats> proc_stats(pid_t pid) {
  ProcStats s;
  std::error_code ec;
  const std::filesystem::path proc = fmt::format("/proc/{}", pid);
  for (std::filesystem::directory_iterator it(proc / "fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++s.fds;
  }
  if (ec) return std::nullopt;
  std::ifstream status(proc / "status");
  std::string line;
  bool zombie = false;
  while (std::getline(status, line)) {
    if (line.starts_with("State:") && line.find('Z') != std::string::npos) zombie = true;
    if (line.starts_with("Threads:")) s.threads = std::stoul(line.substr(8));
    if (line.starts_with("VmRSS:")) s.rss_kib = std::stoull(line.substr(6));
  }
  if (zombie || s.threads == 0) return std::nullopt;
  return s;
}

std::string to_string(const ProcStats& s) {
  return fmt::format("{} files, {} threads, {} KiB resident", s.fds, s.threads, s.rss_kib);
}

bool at_baseline(const ProcStats& now, const ProcStats& baseline, std::uint64_t rss_slack_kib) {
  return now.fds == baseline.fds && now.threads == baseline.threads &&
         now.rss_kib <= baseline.rss_kib + rss_slack_kib;
}

std::optional<std::chrono::milliseconds> wait_for_baseline(pid_t pid, const ProcStats& baseline,
                                                           std::uint64_t rss_slack_kib,
                                                           std::chrono::milliseconds limit) {
  const auto start = Clock::now();
  while (true) {
    const auto now = proc_stats(pid);
    if (!now) return std::nullopt;
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    if (at_baseline(*now, baseline, rss_slack_kib)) return took;
    if (took > limit) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace volley::test
