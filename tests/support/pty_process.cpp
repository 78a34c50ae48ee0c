#include "support/pty_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>

namespace volley::test {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

PtyProcess::PtyProcess(std::vector<std::string> args) {
  master_fd_ = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master_fd_ < 0) return;
  char name[128];
  if (::grantpt(master_fd_) != 0 || ::unlockpt(master_fd_) != 0 ||
      ::ptsname_r(master_fd_, name, sizeof name) != 0) {
    ::close(master_fd_);
    master_fd_ = -1;
    return;
  }
  // Everything the child needs is built before fork(): after it, only async-signal-safe calls.
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    // A session of its own: opening the pty then makes it the controlling terminal, and this
    // process group the terminal's foreground group.
    ::setsid();
    const int tty = ::open(name, O_RDWR);
    if (tty < 0) ::_exit(127);
    ::ioctl(tty, TIOCSCTTY, 0);
    ::dup2(tty, STDIN_FILENO);
    ::dup2(tty, STDOUT_FILENO);
    ::dup2(tty, STDERR_FILENO);
    if (tty > STDERR_FILENO) ::close(tty);
    // As a shell leaves them for a foreground job: default dispositions, nothing blocked.
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  if (pid_ < 0) return;
  reader_ = std::thread([this] { read_loop(); });
}

PtyProcess::~PtyProcess() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  {
    std::lock_guard lock(mutex_);
    closed_ = true;  // the reader leaves at its next poll
  }
  if (reader_.joinable()) reader_.join();
  if (master_fd_ >= 0) ::close(master_fd_);
}

void PtyProcess::read_loop() {
  char buf[4096];
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
    }
    pollfd p{master_fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, 50);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(master_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    std::lock_guard lock(mutex_);
    if (n <= 0) {
      // EIO: every slave side is closed (the child and what it started have exited).
      closed_ = true;
      return;
    }
    output_.append(buf, static_cast<std::size_t>(n));
  }
}

bool PtyProcess::wait_for_output(const std::string& text, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    {
      std::lock_guard lock(mutex_);
      if (output_.find(text) != std::string::npos) return true;
      if (closed_) return false;
    }
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

void PtyProcess::press_interrupt() const {
  termios t{};
  char intr = '\x03';
  if (::tcgetattr(master_fd_, &t) == 0 && t.c_cc[VINTR] != _POSIX_VDISABLE)
    intr = static_cast<char>(t.c_cc[VINTR]);
  [[maybe_unused]] const auto n = ::write(master_fd_, &intr, 1);
}

PtyExit PtyProcess::wait(std::chrono::milliseconds limit) {
  PtyExit result;
  if (pid_ <= 0 || reaped_) return result;
  const auto deadline = Clock::now() + limit;
  int status = 0;
  for (;;) {
    const pid_t got = ::waitpid(pid_, &status, WNOHANG);
    if (got == pid_) break;
    if (Clock::now() >= deadline) {
      result.timed_out = true;
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(5ms);
  }
  reaped_ = true;
  if (result.timed_out) return result;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

std::string PtyProcess::output() const {
  std::lock_guard lock(mutex_);
  return output_;
}

}  // namespace volley::test
