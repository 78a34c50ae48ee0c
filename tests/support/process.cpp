#include "support/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

extern char** environ;

namespace volley::test {

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path unique_path(const std::string& stem) {
  std::random_device rd;
  return fs::temp_directory_path() /
         (stem + "-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
}

}  // namespace

Process::Process(std::vector<std::string> args, Job job)
    : out_path_(unique_path("volley-test-out")), err_path_(unique_path("volley-test-err")) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path_.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path_.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (job == Job::kOwnGroup) {
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  }
  if (::posix_spawn(&pid_, argv[0], &actions, &attributes, argv.data(), environ) != 0) pid_ = -1;
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
}

Process::~Process() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  std::error_code ignored;
  fs::remove(out_path_, ignored);
  fs::remove(err_path_, ignored);
}

void Process::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

void Process::signal_group(int sig) const {
  if (pid_ > 0) ::kill(-pid_, sig);
}

ProcessResult Process::wait(std::chrono::milliseconds limit) {
  return wait(limit, SIGKILL, std::chrono::milliseconds(0));
}

ProcessResult Process::wait(std::chrono::milliseconds limit, int sig,
                            std::chrono::milliseconds grace) {
  return wait(limit, sig, grace, [] {});
}

ProcessResult Process::wait(std::chrono::milliseconds limit, int sig,
                            std::chrono::milliseconds grace,
                            const std::function<void()>& overstayed) {
  ProcessResult result;
  if (pid_ <= 0) {
    result.err = "could not start the process";
    return result;
  }
  auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (std::chrono::steady_clock::now() > deadline) {
      if (!result.timed_out) overstayed();
      result.timed_out = true;
      if (sig != SIGKILL) {
        ::kill(pid_, sig);
        sig = SIGKILL;
        deadline = std::chrono::steady_clock::now() + grace;
        continue;
      }
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid_ = -1;
  if (WIFEXITED(status) && !result.timed_out) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = slurp(out_path_);
  result.err = slurp(err_path_);
  return result;
}

std::string Process::stderr_so_far() const { return slurp(err_path_); }

std::string Process::stdout_so_far() const { return slurp(out_path_); }

ProcessResult run_volley(const std::vector<std::string>& args, std::chrono::milliseconds limit) {
  std::vector<std::string> full{VOLLEY_BINARY_PATH};
  full.insert(full.end(), args.begin(), args.end());
  Process p(std::move(full));
  return p.wait(limit);
}

}  // namespace volley::test
