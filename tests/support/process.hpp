#pragma once
// Runs the real volley binary from tests: to completion with a time limit, or in the background
// to be signalled. Output goes to temporary files read back after exit. Every child is waited
// for, and killed if the test gives up on it, so no process outlives its test.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace volley::test {

struct ProcessResult {
  int exit_code = -1;  ///< -1 when killed by the time limit or a signal
  int signal = 0;
  bool timed_out = false;
  std::string out;
  std::string err;
};

/// Where a process runs: in the test's process group, or as a job of its own (a process group of
/// its own in the test's session, as a shell with job control starts a command).
enum class Job { kTestsGroup, kOwnGroup };

class Process {
 public:
  explicit Process(std::vector<std::string> args, Job job = Job::kTestsGroup);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  void signal(int sig) const;
  /// Signals its whole process group (Job::kOwnGroup), as a terminal signals its foreground job:
  /// SIGINT for Ctrl-C, SIGTSTP for Ctrl-Z, SIGCONT for the shell's fg.
  void signal_group(int sig) const;
  /// Waits up to `limit`; kills the process (SIGKILL) when it has not exited by then.
  ProcessResult wait(std::chrono::milliseconds limit);
  /// The same, but at `limit` first sends `sig` (SIGINT: volley then prints what it measured,
  /// which says where it was stuck) and allows `grace` for it before SIGKILL.
  ProcessResult wait(std::chrono::milliseconds limit, int sig, std::chrono::milliseconds grace);
  /// The same, calling `overstayed` (with the process still as it was) before the signal.
  ProcessResult wait(std::chrono::milliseconds limit, int sig, std::chrono::milliseconds grace,
                     const std::function<void()>& overstayed);
  /// What it printed so far.
  [[nodiscard]] std::string stderr_so_far() const;
  [[nodiscard]] std::string stdout_so_far() const;

 private:
  pid_t pid_ = -1;
  std::filesystem::path out_path_;
  std::filesystem::path err_path_;
};

/// Runs `volley ARGS...` to completion (at most `limit`).
ProcessResult run_volley(const std::vector<std::string>& args,
                         std::chrono::milliseconds limit = std::chrono::seconds(60));

}  // namespace volley::test
