#pragma once
// A real `volley serve` for tests, on a loopback port of its own, stopped by PID at the end; and
// the small real runs tests use to prove a slave still serves.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "support/process.hpp"

namespace volley::test {

/// uperf's ping-pong: `threads` strands connect to `host`, then write/read 64 bytes for
/// `duration` (a profile duration: in profiles `m` is uperf's milliseconds), then disconnect.
/// `extra` is inserted after the read (more flowops). Any of them may be a $variable.
std::string pingpong(const std::string& threads, const std::string& duration,
                     const std::string& extra = "", const std::string& host = "127.0.0.1");

class Serve {
 public:
  /// `volley serve --listen 127.0.0.1:PORT EXTRA...`, run under `prefix` (e.g. prlimit); waits
  /// until it accepts connections (a test failure when it does not within 10 s).
  explicit Serve(std::vector<std::string> extra = {}, std::vector<std::string> prefix = {});
  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] std::string port_text() const { return std::to_string(port_); }
  /// True when it listened (the constructor's wait did not give up).
  [[nodiscard]] bool listening() const { return listening_; }
  Process& process() { return process_; }
  /// SIGTERM; the exit status, or -1 when it had not exited after `limit` (then killed).
  ProcessResult terminate(std::chrono::milliseconds limit = std::chrono::seconds(5));

 private:
  std::uint16_t port_;
  Process process_;
  bool listening_ = false;
};

/// A full, real run of a 2-strand ping-pong of `duration` against `serve` through the CLI,
/// with extra `volley run` arguments (e.g. --json FILE).
ProcessResult run_pingpong(const Serve& serve, const std::string& duration = "300ms",
                           const std::vector<std::string>& extra = {});

}  // namespace volley::test
