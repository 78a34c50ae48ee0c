#include "volley/process/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include <fmt/format.h>

extern char** environ;

namespace volley::process {

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
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, executable.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return fmt::format("{}: cannot start {}: {}", name, executable, std::strerror(rc));
  }
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
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      if (WIFSIGNALED(status)) {
        ended_ = fmt::format("was killed by signal {} ({})", WTERMSIG(status), ::strsignal(WTERMSIG(status)));
      } else {
        ended_ = fmt::format("exited with status {}", WEXITSTATUS(status));
      }
      return ended_;
    }
    if (r < 0 && errno != EINTR) {
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
