#include "volley/cli/local_slave.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "volley/core/host_port.hpp"
#include "volley/core/limits.hpp"

extern char** environ;

namespace volley::cli {

namespace {
constexpr int kAnnounceFd = 3;
constexpr int kKeyFd = 4;
constexpr int kStartTimeoutMs = 10000;
}  // namespace

LocalSlave::~LocalSlave() { stop(); }

std::string LocalSlave::start(std::size_t workers, const std::string& executable,
                              std::uint32_t processes, const std::string& address) {
  address_ = address;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return fmt::format("local slave: pipe: {}", std::strerror(errno));
  // The key goes through a pipe (argv and the environment are readable by other users). It is
  // written whole before the child starts: 64 hex digits fit any pipe's buffer.
  int key_fds[2];
  if (::pipe2(key_fds, O_CLOEXEC) != 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return fmt::format("local slave: pipe: {}", std::strerror(errno));
  }
  const std::string key_text = control::random_bytes(32);
  key_ = control::Secret(key_text.begin(), key_text.end());
  const std::string key_hex = control::to_hex(key_text);
  const bool key_written =
      ::write(key_fds[1], key_hex.data(), key_hex.size()) == static_cast<ssize_t>(key_hex.size());
  ::close(key_fds[1]);
  if (!key_written) {
    ::close(key_fds[0]);
    ::close(fds[0]);
    ::close(fds[1]);
    return fmt::format("local slave: cannot pass the key: {}", std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // dup2 clears close-on-exec on the child's copy, so only these ends reach it, as fds 3 and 4.
  posix_spawn_file_actions_adddup2(&actions, fds[1], kAnnounceFd);
  posix_spawn_file_actions_adddup2(&actions, key_fds[0], kKeyFd);
  std::vector<std::string> args = {
      "volley", "serve", "--listen", core::format_host_port(address, 0), "--exit-with-parent",
      "--announce-fd", std::to_string(kAnnounceFd), "--key-fd", std::to_string(kKeyFd),
      // Its limits guard a shared slave from strangers' runs; this
      // one serves only the master that started it.
      "--max-strands", std::to_string(core::kMaxRunSize), "--max-connections",
      std::to_string(core::kMaxRunSize)};
  if (quiet_) args.emplace_back("--quiet");
  // Always said: the slave would otherwise take VOLLEY_IO from the environment, which the master
  // has already resolved (an `auto` that fell back to epoll included).
  args.emplace_back("--io");
  args.emplace_back(io_ == engine::IoEngine::kUring ? "uring" : "epoll");
  if (processes > 0) {
    args.emplace_back("--processes");
    args.push_back(std::to_string(processes));
  }
  if (workers > 0) {
    args.emplace_back("--workers");
    args.push_back(std::to_string(workers));
  }
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The slave starts with SIGINT blocked, so a Ctrl-C pressed while it starts waits until it has
  // chosen to ignore it (`--exit-with-parent`: the master handles Ctrl-C for both; see
  // serve_command).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  posix_spawnattr_setsigmask(&attributes, &blocked);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  const int rc =
      ::posix_spawn(&pid_, executable.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  ::close(key_fds[0]);
  if (rc != 0) {
    ::close(fds[0]);
    pid_ = -1;
    return fmt::format("local slave: cannot start: {}", std::strerror(rc));
  }
  std::string line;
  pollfd p{fds[0], POLLIN, 0};
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kStartTimeoutMs);
  while (line.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) break;
    char buf[64];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    line.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  const auto port = line.empty() ? 0UL : std::strtoul(line.c_str(), nullptr, 10);
  if (port == 0 || port > 65535) {
    stop();
    return "local slave did not start listening within 10 s";
  }
  port_ = static_cast<std::uint16_t>(port);
  return {};
}

void LocalSlave::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 50; ++i) {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

}  // namespace volley::cli
