#pragma once
// `volley run --local`: a slave of our own, in a separate process (so that CPU is accounted per
// side, as with a remote slave), listening on loopback. It dies with us (PR_SET_PDEATHSIG) and is
// stopped and reaped by the destructor, so no process is left behind. It is given a fresh random
// key (through a pipe, never argv), and the master uses the same: the local path authenticates.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "volley/control/auth.hpp"
#include "volley/engine/io_engine.hpp"

namespace volley::cli {

class LocalSlave {
 public:
  /// `quiet`: the slave logs nothing (for --local, whose output is the master's report).
  explicit LocalSlave(bool quiet = true) : quiet_(quiet) {}
  ~LocalSlave();
  LocalSlave(const LocalSlave&) = delete;
  LocalSlave& operator=(const LocalSlave&) = delete;

  /// Starts `volley serve` on the loopback `address` (127.0.0.1, or ::1 for a profile that
  /// reaches its slaves over IPv6) with an ephemeral port and waits until it listens.
  /// Returns an error sentence, or "".
  /// `executable` is volley itself unless a test runs this from another binary.
  std::string start(std::size_t workers, const std::string& executable = "/proc/self/exe",
                    std::uint32_t processes = 0, const std::string& address = "127.0.0.1");
  /// Before start(): the engine the slave's runs use (its --io).
  void use_io(engine::IoEngine io) { io_ = io; }
  [[nodiscard]] std::uint16_t port() const { return port_; }
  /// The loopback address it listens on.
  [[nodiscard]] const std::string& address() const { return address_; }
  [[nodiscard]] pid_t pid() const { return pid_; }
  /// The slave's ephemeral key (empty before start()).
  [[nodiscard]] const control::Secret& key() const { return key_; }
  /// SIGTERM, then SIGKILL if it has not exited within a few seconds; always reaps it.
  void stop();

 private:
  bool quiet_ = true;
  engine::IoEngine io_ = engine::IoEngine::kEpoll;
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  std::string address_ = "127.0.0.1";
  control::Secret key_;
};

}  // namespace volley::cli
