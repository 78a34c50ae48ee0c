#include "volley/process/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>

#include <fmt/format.h>

extern char** environ;

namespace volley::process {

namespace {

/// The children this process started and has not reaped, for the stop-signal handler: each slot
/// holds a pid, or 0. Lock-free atomics only (the handler reads them). A child beyond the last
/// slot is not stopped with its parent.
constexpr std::size_t kTrackedChildren = 4096;
std::array<std::atomic<pid_t>, kTrackedChildren> g_children{};

void track(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) return;
  }
}

void untrack(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t tracked = pid;
    if (slot.compare_exchange_strong(tracked, 0)) return;
  }
}

void signal_children(int sig) {
  for (const auto& slot : g_children) {
    if (const pid_t pid = slot.load(); pid > 0) ::kill(pid, sig);
  }
}

/// The terminal's stop signals: Ctrl-Z, and a background job's read or write on the terminal.
constexpr std::array kStopSignals = {SIGTSTP, SIGTTIN, SIGTTOU};

/// Stops the children, then this process as `sig` would have; once this process is continued
/// (the shell's fg or bg), continues them. Async-signal-safe.
void on_stop_signal(int sig) {
  const int saved_errno = errno;
  signal_children(SIGSTOP);
  struct sigaction stop {};
  stop.sa_handler = SIG_DFL;
  ::sigemptyset(&stop.sa_mask);
  struct sigaction relay {};
  ::sigaction(sig, &stop, &relay);
  sigset_t only;
  ::sigemptyset(&only);
  ::sigaddset(&only, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  ::raise(sig);  // stops here until continued
  ::sigaction(sig, &relay, nullptr);
  signal_children(SIGCONT);
  errno = saved_errno;
}

/// Once per process: relays each stop signal left at its default to the children. One that is
/// ignored (a shell without job control ignores them) stays ignored.
void relay_stop_signals() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const int sig : kStopSignals) {
      struct sigaction current {};
      if (::sigaction(sig, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
      struct sigaction relay {};
      relay.sa_handler = on_stop_signal;
      ::sigemptyset(&relay.sa_mask);
      relay.sa_flags = SA_RESTART;
      ::sigaction(sig, &relay, nullptr);
    }
  });
}

/// How a reaped child ended, from its wait status.
std::string describe_end(int status) {
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       ::strsignal(WTERMSIG(status)));
  }
  return fmt::format("exited with status {}", WEXITSTATUS(status));
}

}  // namespace

std::variant<ChildProcess, std::string> ChildProcess::spawn(const std::string& executable,
                                                            const std::vector<std::string>& args,
                                                            std::string name) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return fmt::format("{}: socketpair: {}", name, std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // dup2 clears close-on-exec on the child's copy: only the child's end reaches it, as fd 3.
  posix_spawn_file_actions_adddup2(&actions, fds[1], kChildFd);
  std::vector<std::string> all = {"volley", "serve", "--child-fd", std::to_string(kChildFd)};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(all.size() + 1);
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  // A session of its own: out of the terminal's job and its scheduler group (see the header).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
  relay_stop_signals();
  pid_t pid = -1;
  const int rc =
      ::posix_spawn(&pid, executable.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return fmt::format("{}: cannot start {}: {}", name, executable, std::strerror(rc));
  }
  track(pid);
  return ChildProcess(pid, fds[0], std::move(name));
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      fd_(std::exchange(other.fd_, -1)),
      name_(std::move(other.name_)),
      ended_(std::move(other.ended_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    reap(std::chrono::milliseconds(0));
    if (fd_ >= 0) ::close(fd_);
    pid_ = std::exchange(other.pid_, -1);
    fd_ = std::exchange(other.fd_, -1);
    name_ = std::move(other.name_);
    ended_ = std::move(other.ended_);
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  reap(std::chrono::milliseconds(0));
  if (fd_ >= 0) ::close(fd_);
}

int ChildProcess::take_fd() { return std::exchange(fd_, -1); }

std::string ChildProcess::describe() const { return fmt::format("{} (pid {})", name_, pid_); }

std::string ChildProcess::exit_status(std::chrono::milliseconds wait) {
  if (!ended_.empty() || pid_ <= 0) return ended_;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    // Looked at before it is reaped: it leaves the stop handler's list while its pid is still
    // its own, never to be signalled once the pid is free for another process.
    siginfo_t info{};
    const int r = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    if (r == 0 && info.si_pid == pid_) {
      untrack(pid_);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      ended_ = describe_end(status);
      return ended_;
    }
    if (r < 0 && errno != EINTR) {
      untrack(pid_);
      ended_ = "is gone";
      return ended_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void ChildProcess::reap(std::chrono::milliseconds grace) {
  if (pid_ <= 0 || !ended_.empty()) return;
  if (!exit_status(grace).empty()) return;
  ::kill(pid_, SIGKILL);
  exit_status(std::chrono::seconds(10));
}

bool die_with_parent() {
  const pid_t parent = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died before the request: then the signal never comes.
  return ::getppid() == parent && parent != 1;
}

}  // namespace volley::process
