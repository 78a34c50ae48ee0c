#include "volley/cli/io_choice.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "volley/core/printable.hpp"
#include "volley/transport/ring.hpp"

namespace volley::cli {

namespace {
/// The default of --io when it is not given.
constexpr const char* kIoVariable = "VOLLEY_IO";
}  // namespace

void add_io_option(CLI::App& cmd, std::string& choice) {
  cmd.add_option("--io", choice,
                 "How the workers wait for their sockets: epoll (the default), uring (io_uring: "
                 "plain TCP connections' reads and waits go through a ring per worker, submitted "
                 "in batches; fails if io_uring is unavailable here) or auto (uring where "
                 "available, else epoll, saying so); default: $VOLLEY_IO, else epoll")
      ->type_name("ENGINE")
      ->check(CLI::IsMember({"epoll", "uring", "auto"}));
}

std::variant<engine::IoEngine, IoProblem> resolve_io(const std::string& choice, std::string& note) {
  std::string chosen = choice;
  if (chosen.empty()) {
    const char* from_environment = std::getenv(kIoVariable);
    chosen = from_environment != nullptr ? from_environment : "epoll";
    if (chosen != "epoll" && chosen != "uring" && chosen != "auto") {
      return IoProblem{fmt::format("{}={}: not an engine (epoll, uring or auto)", kIoVariable,
                                   core::printable(chosen)),
                       core::ExitCode::kBadInput};
    }
  }
  if (chosen == "epoll") return engine::IoEngine::kEpoll;
  const std::string why = transport::Ring::unavailable();
  if (why.empty()) return engine::IoEngine::kUring;
  if (chosen == "auto") {
    note = "--io auto: " + why + "; using epoll";
    return engine::IoEngine::kEpoll;
  }
  return IoProblem{"--io uring: " + why};
}

const char* io_name(engine::IoEngine io) {
  return io == engine::IoEngine::kUring ? "uring" : "epoll";
}

}  // namespace volley::cli
