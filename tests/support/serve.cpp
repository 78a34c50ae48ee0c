#include "support/serve.hpp"

#include <signal.h>

#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/control_client.hpp"
#include "support/net.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string pingpong(const std::string& threads, const std::string& duration,
                     const std::string& extra, const std::string& host) {
  return fmt::format(R"XML(<?xml version="1.0"?>
<profile name="pp">
  <group nthreads="{}">
    <transaction iterations="1"><flowop type="connect" options="remotehost={} protocol=tcp"/></transaction>
    <transaction duration="{}">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>{}
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML",
                     threads, host, duration, extra);
}

namespace {

std::vector<std::string> serve_args(std::uint16_t port, std::vector<std::string> extra,
                                    std::vector<std::string> prefix) {
  std::vector<std::string> a = std::move(prefix);
  a.insert(a.end(), {VOLLEY_BINARY_PATH, "serve", "--listen", fmt::format("127.0.0.1:{}", port)});
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

}  // namespace

Serve::Serve(std::vector<std::string> extra, std::vector<std::string> prefix)
    : port_(free_port()), process_(serve_args(port_, std::move(extra), std::move(prefix))) {
  const auto deadline = Clock::now() + 10s;
  while (Clock::now() < deadline) {
    ControlClient probe(port_);
    if (probe.connected()) {
      listening_ = true;
      return;
    }
    std::this_thread::sleep_for(20ms);
  }
  ADD_FAILURE() << "volley serve did not listen: " << process_.stderr_so_far();
}

ProcessResult Serve::terminate(std::chrono::milliseconds limit) {
  process_.signal(SIGTERM);
  return process_.wait(limit);
}

ProcessResult run_pingpong(const Serve& serve, const std::string& duration,
                           const std::vector<std::string>& extra) {
  TempDir dir;
  const auto profile = dir.write("pp.xml", pingpong("2", duration));
  std::vector<std::string> args{"run", profile.string(), "-P", serve.port_text(), "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_volley(args);
}

}  // namespace volley::test
