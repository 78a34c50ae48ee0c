#include "volley/cli/io_choice.hpp"

#include "volley/transport/ring.hpp"

namespace volley::cli {

void add_io_option(CLI::App& cmd, std::string& choice) {
  cmd.add_option("--io", choice,
                 "How the workers wait for their sockets: epoll (the default), uring (io_uring: "
                 "plain TCP connections' reads and waits go through a ring per worker, submitted "
                 "in batches; fails if io_uring is unavailable here) or auto (uring where "
                 "available, else epoll, saying so); default: $VOLLEY_IO, else epoll")
      ->envname("VOLLEY_IO")
      ->check(CLI::IsMember({"epoll", "uring", "auto"}));
}

std::variant<engine::IoEngine, std::string> resolve_io(const std::string& choice,
                                                       std::string& note) {
  if (choice == "epoll" || choice.empty()) return engine::IoEngine::kEpoll;
  const std::string why = transport::Ring::unavailable();
  if (why.empty()) return engine::IoEngine::kUring;
  if (choice == "auto") {
    note = "--io auto: " + why + "; using epoll";
    return engine::IoEngine::kEpoll;
  }
  return "--io uring: " + why;
}

const char* io_name(engine::IoEngine io) {
  return io == engine::IoEngine::kUring ? "uring" : "epoll";
}

}  // namespace volley::cli
