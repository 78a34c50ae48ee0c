#pragma once
// A control-protocol client for tests that must say what no real master says: messages out of
// order, garbage, a session left half-way. Blocking POSIX socket on loopback, every wait bounded.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "volley/control/auth.hpp"

namespace volley::test {

class ControlClient {
 public:
  /// Connects to 127.0.0.1:port (connected() says whether it worked).
  explicit ControlClient(std::uint16_t port);
  /// Takes over a connected descriptor (closed with the client).
  struct Adopt {
    int fd;
  };
  explicit ControlClient(Adopt adopt) : fd_(adopt.fd) {}
  ~ControlClient();
  ControlClient(const ControlClient&) = delete;
  ControlClient& operator=(const ControlClient&) = delete;

  [[nodiscard]] bool connected() const { return fd_ >= 0; }
  /// Sends one framed message.
  bool send(const nlohmann::json& message);
  /// Sends bytes as they are.
  bool send_raw(const std::string& bytes);
  /// The next message other than a ping, or nullopt on close, error or timeout.
  std::optional<nlohmann::json> receive(std::chrono::milliseconds limit = std::chrono::seconds(5));
  /// Receives until a message of `type` (skipping others), or nullopt.
  std::optional<nlohmann::json> receive_type(
      const std::string& type, std::chrono::milliseconds limit = std::chrono::seconds(10));
  /// True when the peer closes the connection within `limit`.
  bool closed_within(std::chrono::milliseconds limit);
  /// hello -> hello; returns the slave's hello.
  std::optional<nlohmann::json> greet();
  /// hello -> hello (with a challenge) -> auth -> auth_ok, proving `key` as a master does; from
  /// then on send() and receive() carry and check MACs. Returns the slave's auth_ok, or nullopt
  /// (the slave's refusal, if any, is in last_refusal()).
  std::optional<nlohmann::json> authenticate(const control::Secret& key);
  /// The mask the session applies to the run token in `load` (0 unauthenticated).
  [[nodiscard]] std::uint32_t data_mask() const { return keys_.data_mask; }
  /// Everything sent so far, raw.
  [[nodiscard]] const std::string& sent_bytes() const { return sent_; }
  /// Everything received so far, raw (to check what crossed the wire).
  [[nodiscard]] const std::string& received_bytes() const { return received_; }
  void close();
  /// Half-closes: the peer reads end of file, and we can still read its answers.
  void shutdown_write();
  /// Gives up the descriptor (the caller closes it).
  int release();

 private:
  bool read_exact(char* out, std::size_t n, std::chrono::steady_clock::time_point deadline);
  int fd_ = -1;
  std::string received_;
  std::string sent_;
  control::SessionKeys keys_;
  bool keyed_ = false;
  std::uint64_t send_sequence_ = 0;
  std::uint64_t receive_sequence_ = 0;
};

/// A load message for `profile_text` as a master would send it (seed 1, token 7).
nlohmann::json load_message(const std::string& profile_text, std::size_t workers = 0);

/// A message with a type and fields (control::message).
nlohmann::json control_message(const std::string& type,
                               nlohmann::json fields = nlohmann::json::object());

/// A data connection to 127.0.0.1:port that sends the 20-byte header (token, group, strand,
/// conn); the descriptor (the caller closes it), or -1.
int connect_data(std::uint16_t port, std::uint32_t token, std::uint32_t group = 0,
                 std::uint32_t strand = 0);
/// The negotiated data port in a "loaded" message, or 0.
std::uint16_t negotiated_port(const nlohmann::json& loaded);

}  // namespace volley::test
