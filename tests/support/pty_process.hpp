#pragma once
// Runs the real volley binary on a pseudo-terminal, as a person runs it at a terminal: the child
// leads a session of its own whose controlling terminal is the pty, so its process group (and
// every process it starts in that group) is the terminal's foreground group. Writing the VINTR
// character (Ctrl-C) to the master side then makes the kernel's line discipline send SIGINT to
// that whole group, exactly as a key press does. Output is read continuously by a thread (a pty
// whose master is not read blocks its writer). The child is waited for, and killed by PID if the
// test gives up on it.
#include <sys/types.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace volley::test {

struct PtyExit {
  std::optional<int> exit_code;  ///< unset when it was killed by a signal or did not exit
  int signal = 0;                ///< the signal that killed it, if one did
  bool timed_out = false;        ///< still running at the limit: killed by the test (SIGKILL)
};

class PtyProcess {
 public:
  /// Starts `args` (args[0] a path) on a new pty. A failure to start shows as pid() <= 0.
  explicit PtyProcess(std::vector<std::string> args);
  /// Kills the child (SIGKILL by PID) if it still runs, waits for it, closes the pty.
  ~PtyProcess();
  PtyProcess(const PtyProcess&) = delete;
  PtyProcess& operator=(const PtyProcess&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  /// Waits until the output so far holds `text`; false when `limit` passed or the pty closed
  /// first.
  bool wait_for_output(const std::string& text, std::chrono::milliseconds limit);
  /// Types the terminal's interrupt character (VINTR, Ctrl-C by default).
  void press_interrupt() const;
  /// Waits up to `limit` for the child to exit; kills it (SIGKILL) at the limit.
  PtyExit wait(std::chrono::milliseconds limit);
  /// Everything it wrote to the terminal so far.
  [[nodiscard]] std::string output() const;

 private:
  void read_loop();

  pid_t pid_ = -1;
  int master_fd_ = -1;
  bool reaped_ = false;
  mutable std::mutex mutex_;
  std::string output_;
  bool closed_ = false;
  std::thread reader_;
};

}  // namespace volley::test
