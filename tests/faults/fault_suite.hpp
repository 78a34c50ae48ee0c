#pragma once
// Shared by the fault suite: a slave with its idle baseline, the check that it is back to that
// baseline and still serves after a fault, the suite's scale (VOLLEY_FAULT_SCALE, 1 in CI, more
// in tests/faults/soak.sh) and its figures (printed as "fault-figure NAME VALUE" lines, which
// soak.sh collects).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <string>

#include <fmt/format.h>

#include "support/proc_stats.hpp"
#include "support/serve.hpp"

namespace volley::test {

/// How many times the CI counts each fault is repeated (VOLLEY_FAULT_SCALE, default 1).
inline std::size_t fault_scale() {
  const char* s = std::getenv("VOLLEY_FAULT_SCALE");
  const long v = s != nullptr ? std::strtol(s, nullptr, 10) : 1;
  return v > 0 ? static_cast<std::size_t>(v) : 1;
}

inline void fault_figure(const std::string& name, const std::string& value) {
  std::printf("fault-figure %s %s\n", name.c_str(), value.c_str());
  std::fflush(stdout);
  ::testing::Test::RecordProperty(name, value);
}

#ifdef VOLLEY_SANITIZED
// ASan holds freed memory in quarantine (256 MiB) and its allocator keeps freed chunks mapped:
// after a 16 MiB-frame storm the slave's resident memory stays ~370 MiB above the baseline
// however well it freed. Under the sanitizers the resident-memory check therefore only guards
// against gigabytes; leaks are LeakSanitizer's to find (at exit), and files and threads are
// still compared exactly. The normal build keeps the tight bound below.
inline constexpr std::uint64_t kRssSlackKib = 2 * 1024 * 1024;
inline constexpr double kSlowdown = 4;
#else
// glibc's allocator keeps freed arenas of the worker threads for reuse.
inline constexpr std::uint64_t kRssSlackKib = 32 * 1024;
inline constexpr double kSlowdown = 1;
#endif

/// A slave that has served one real run (so lazily built state is in the baseline), and its
/// idle baseline.
class BaselinedSlave {
 public:
  explicit BaselinedSlave(std::vector<std::string> extra = {}) : serve_(std::move(extra)) {
    const auto warm = run_pingpong(serve_);
    EXPECT_EQ(warm.exit_code, 0) << warm.err;
    // The run's sessions end after the master's exit: wait for the descriptors to settle.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    baseline_ = proc_stats(serve_.process().pid()).value_or(ProcStats{});
  }
  Serve& serve() { return serve_; }
  [[nodiscard]] pid_t pid() { return serve_.process().pid(); }
  [[nodiscard]] const ProcStats& baseline() const { return baseline_; }

  /// After a fault: the slave is back to its baseline (how long it took, also kept as the
  /// worst so far); a hang guard of 10 s, not the 1 s target, because the machine is loaded.
  std::chrono::milliseconds expect_back_to_baseline(const std::string& after) {
    const auto took = wait_for_baseline(pid(), baseline_, kRssSlackKib, std::chrono::seconds(10));
    const auto now = proc_stats(pid());
    EXPECT_TRUE(took.has_value()) << after << ": not back to the idle baseline ("
                                  << to_string(baseline_) << "): "
                                  << (now ? to_string(*now) : std::string("the slave is gone"))
                                  << "\n"
                                  << serve_.process().stderr_so_far();
    const auto t = took.value_or(std::chrono::milliseconds(10'000));
    worst_ = std::max(worst_, t);
    return t;
  }
  /// A real run through the CLI succeeds.
  void expect_serves(const std::string& after) {
    const auto r = run_pingpong(serve_);
    EXPECT_EQ(r.exit_code, 0) << after << ": the next real run failed\n" << r.err;
  }
  [[nodiscard]] std::chrono::milliseconds worst() const { return worst_; }
  /// SIGTERM stops it with status 0 (it did not crash meanwhile).
  void expect_clean_exit() {
    const auto r = serve_.terminate(std::chrono::seconds(10));
    EXPECT_EQ(r.exit_code, 0) << "the slave crashed or ignored SIGTERM (signal " << r.signal
                              << ")\n"
                              << r.err;
  }

 private:
  Serve serve_;
  ProcStats baseline_;
  std::chrono::milliseconds worst_{0};
};

/// A process's peak VmRSS while the test does something, sampled every 2 ms.
class PeakMemory {
 public:
  explicit PeakMemory(pid_t pid)
      : thread_([this, pid] {
          while (!stop_) {
            if (const auto s = proc_stats(pid)) peak_ = std::max<std::uint64_t>(peak_, s->rss_kib);
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
          }
        }) {}
  ~PeakMemory() { stop(); }
  std::uint64_t stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return peak_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> peak_{0};
  std::thread thread_;
};

}  // namespace volley::test
