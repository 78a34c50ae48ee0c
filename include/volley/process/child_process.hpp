#pragma once
// A child process that is a control session of its parent: `volley serve --child-fd 3` with one
// end of a socketpair as descriptor 3. The parent speaks the ordinary control protocol on the
// other end, as a master speaks to a slave (docs/architecture.md, "Processes"). The link is a
// socketpair between two processes of one run, so it is trusted: no key, no token.
//
// A child never outlives its parent: it asks the kernel for SIGKILL when the parent dies
// (PR_SET_PDEATHSIG), and the parent's ChildProcess kills and reaps it when it goes out of scope.
//
// A child runs in a session of its own (setsid), out of the terminal's job, whose signals are its
// parent's: Ctrl-C reaches the parent only, which stops the run through the link; the terminal's
// stop signals (Ctrl-Z, SIGTTIN, SIGTTOU) stop the parent, which stops its children first
// (SIGSTOP) and continues them when it is continued (SIGCONT). Out of the terminal's session, busy
// children are also out of the scheduler group Linux gives that session (autogroup), where they
// could keep the kernel from turning a Ctrl-C into SIGINT for seconds (docs/architecture.md,
// "Processes").
// Thread: the owner's.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <variant>
#include <vector>

namespace volley::process {

class ChildProcess {
 public:
  /// Starts `executable serve --child-fd 3 ARGS...` in a session of its own; `name` names it in
  /// every message ("slave process 2 of 3"). Returns the child, or why it could not start. The
  /// first spawn makes this process relay the terminal's stop signals to its children.
  static std::variant<ChildProcess, std::string> spawn(const std::string& executable,
                                                       const std::vector<std::string>& args,
                                                       std::string name);
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  /// Kills (SIGKILL) and reaps a child still running.
  ~ChildProcess();

  /// The parent's end of the socketpair (once; -1 after).
  int take_fd();
  [[nodiscard]] pid_t pid() const { return pid_; }
  /// "slave process 2 of 3 (pid 1234)".
  [[nodiscard]] std::string describe() const;
  /// How the child ended ("exited with status 1", "was killed by signal 9"), reaping it, or ""
  /// while it runs. Waits up to `wait` for it to end.
  std::string exit_status(std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  /// Waits up to `grace` for the child to exit by itself, then kills it; always reaps it.
  void reap(std::chrono::milliseconds grace);

 private:
  ChildProcess(pid_t pid, int fd, std::string name) : pid_(pid), fd_(fd), name_(std::move(name)) {}
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string name_;
  std::string ended_;  ///< set once reaped
};

/// The descriptor a child reads its session from.
inline constexpr int kChildFd = 3;

/// In the child, first thing: die with the parent (SIGKILL when it exits). Returns false if the
/// parent is already gone.
bool die_with_parent();

}  // namespace volley::process
