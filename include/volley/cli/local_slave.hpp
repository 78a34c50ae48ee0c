#pragma once
// `volley run --local`: a slave of our own, in a separate process (so that CPU is accounted per
// side, as with a remote slave), listening on loopback. It dies with us (PR_SET_PDEATHSIG) and is
// stopped and reaped by the destructor, so no process is left behind.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace volley::cli {

class LocalSlave {
 public:
  LocalSlave() = default;
  ~LocalSlave();
  LocalSlave(const LocalSlave&) = delete;
  LocalSlave& operator=(const LocalSlave&) = delete;

  /// Starts `volley serve` on 127.0.0.1 with an ephemeral port and waits until it listens.
  /// Returns an error sentence, or "".
  std::string start(std::size_t workers);
  [[nodiscard]] std::uint16_t port() const { return port_; }
  /// SIGTERM, then SIGKILL if it has not exited within a few seconds; always reaps it.
  void stop();

 private:
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
};

}  // namespace volley::cli
