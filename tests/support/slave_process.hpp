#pragma once
// A slave a test starts itself (`volley serve`, `volley -s`), on the host or inside a network
// namespace: started, waited for until it accepts connections, and stopped by PID by stop() or,
// whatever the test did, by the destructor (SIGCONT for one the test froze, SIGTERM, a wait,
// SIGKILL after the limit).
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "support/process.hpp"

namespace volley::test {

/// "ADDRESS:PORT" with an IPv6 address bracketed ("[::1]:20000"): a --listen argument.
std::string listen_address(const std::string& address, std::uint16_t port);

/// `volley serve --listen LISTEN EXTRA...`.
std::vector<std::string> serve_command(const std::string& listen,
                                       const std::vector<std::string>& extra = {});

class SlaveProcess {
 public:
  /// Runs `command` (a full argument vector, e.g. netns_exec(...) of serve_command(...)), then
  /// waits up to 10 s until address:port accepts TCP connections, tried from network namespace
  /// `probe_netns` ("" = the test's own). A slave that never listens fails the test's later
  /// checks, which print log().
  SlaveProcess(std::vector<std::string> command, const std::string& address, std::uint16_t port,
               const std::string& probe_netns = "");
  ~SlaveProcess() { stop(); }
  SlaveProcess(const SlaveProcess&) = delete;
  SlaveProcess& operator=(const SlaveProcess&) = delete;

  /// Its PID (that of `volley` itself: `ip netns exec` execs it), e.g. for /proc/PID/net.
  [[nodiscard]] pid_t pid() const { return process_.pid(); }
  /// Signals the slave (SIGSTOP to freeze a link, SIGKILL to kill a host).
  void signal(int sig) const { process_.signal(sig); }
  /// SIGCONT, SIGTERM and a wait of at most `limit` (then SIGKILL); what it printed. A second
  /// call returns the first one's result.
  ProcessResult stop(std::chrono::milliseconds limit = std::chrono::seconds(10));
  /// What it printed on stderr so far (all of it, also after stop()).
  [[nodiscard]] std::string log() const { return process_.stderr_so_far(); }

 private:
  Process process_;
  bool stopped_ = false;
  ProcessResult result_;
};

/// Two hosts on one machine: `volley serve --listen ADDRESS:PORT EXTRA...` on 127.0.0.1 and on
/// 127.0.0.2, one port, each waited for and stopped by PID.
class TwoLoopbackSlaves {
 public:
  explicit TwoLoopbackSlaves(const std::vector<std::string>& extra = {"-q"});
  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] std::string port_text() const { return std::to_string(port_); }
  SlaveProcess& first() { return first_; }    ///< on 127.0.0.1
  SlaveProcess& second() { return second_; }  ///< on 127.0.0.2

 private:
  std::uint16_t port_;
  SlaveProcess first_;
  SlaveProcess second_;
};

}  // namespace volley::test
