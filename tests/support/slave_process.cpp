#include "support/slave_process.hpp"

#include <signal.h>

#include <thread>

#include <fmt/format.h>

#include "support/net.hpp"
#include "support/netns.hpp"

namespace volley::test {

std::string listen_address(const std::string& address, std::uint16_t port) {
  return address.find(':') != std::string::npos ? fmt::format("[{}]:{}", address, port)
                                                : fmt::format("{}:{}", address, port);
}

std::vector<std::string> serve_command(const std::string& listen,
                                       const std::vector<std::string>& extra) {
  std::vector<std::string> args{VOLLEY_BINARY_PATH, "serve", "--listen", listen};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

SlaveProcess::SlaveProcess(std::vector<std::string> command, const std::string& address,
                           std::uint16_t port, const std::string& probe_netns)
    : process_(std::move(command)) {
  const auto accepts = [&] {
    return probe_netns.empty() ? accepts_connections(address, port)
                               : reachable_from(probe_netns, address, port);
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!accepts() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

ProcessResult SlaveProcess::stop(std::chrono::milliseconds limit) {
  if (!stopped_) {
    stopped_ = true;
    process_.signal(SIGCONT);
    process_.signal(SIGTERM);
    result_ = process_.wait(limit);
  }
  return result_;
}

TwoLoopbackSlaves::TwoLoopbackSlaves(const std::vector<std::string>& extra)
    : port_(free_port()),
      first_(serve_command(listen_address("127.0.0.1", port_), extra), "127.0.0.1", port_),
      second_(serve_command(listen_address("127.0.0.2", port_), extra), "127.0.0.2", port_) {}

}  // namespace volley::test
