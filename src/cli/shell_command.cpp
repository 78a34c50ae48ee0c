#include "shell_command.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

extern char** environ;

namespace volley::cli {

std::string run_shell(const std::string& command) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
  pid_t pid = 0;
  // posix_spawn's argv is char* const[] for historical reasons; it does not write to it.
  const int spawned =
      ::posix_spawn(&pid, "/bin/sh", &actions, nullptr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return fmt::format("cannot start /bin/sh: {}", std::strerror(spawned));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return fmt::format("waiting for it: {}", std::strerror(errno));
  }
  if (WIFEXITED(status)) {
    return WEXITSTATUS(status) == 0 ? std::string()
                                    : fmt::format("it exited with status {}", WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) return fmt::format("it was ended by signal {}", WTERMSIG(status));
  return "it ended abnormally";
}

}  // namespace volley::cli
