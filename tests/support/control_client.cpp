#include "support/control_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>

#include "volley/control/codec.hpp"
#include "volley/control/message.hpp"
#include "volley/transport/connection_header.hpp"

namespace volley::test {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

ControlClient::ControlClient(std::uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) close();
}

ControlClient::~ControlClient() { close(); }

int ControlClient::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void ControlClient::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void ControlClient::shutdown_write() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_WR);
}

bool ControlClient::send_raw(const std::string& bytes) {
  sent_ += bytes;
  std::size_t done = 0;
  while (fd_ >= 0 && done < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return fd_ >= 0;
}

bool ControlClient::send(const json& message) {
  std::string payload = message.dump();
  if (keyed_) payload += control::frame_mac(keys_.master_to_slave, send_sequence_++, payload);
  return send_raw(control::encode_payload(payload));
}

bool ControlClient::read_exact(char* out, std::size_t n, Clock::time_point deadline) {
  std::size_t done = 0;
  while (done < n) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (fd_ < 0 || left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    const ssize_t got = ::read(fd_, out + done, n - done);
    if (got <= 0) return false;
    received_.append(out + done, static_cast<std::size_t>(got));
    done += static_cast<std::size_t>(got);
  }
  return true;
}

std::optional<json> ControlClient::receive(std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  for (;;) {
    std::array<char, 4> header{};
    if (!read_exact(header.data(), header.size(), deadline)) return std::nullopt;
    std::uint32_t n = 0;
    for (char c : header) n = (n << 8) | static_cast<unsigned char>(c);
    if (n > control::kMaxFrameBytes) return std::nullopt;
    std::string payload(n, '\0');
    if (!read_exact(payload.data(), n, deadline)) return std::nullopt;
    if (keyed_) {
      if (payload.size() < control::kMacBytes) return std::nullopt;
      const std::string body = payload.substr(0, payload.size() - control::kMacBytes);
      const std::string mac = payload.substr(body.size());
      const std::string expected =
          control::frame_mac(keys_.slave_to_master, receive_sequence_++, body);
      if (!control::same_secret(mac, expected)) {
        return std::nullopt;
      }
      payload = body;
    }
    json m = json::parse(payload, nullptr, false);
    if (m.is_discarded()) return std::nullopt;
    if (m.is_object() && m.value("type", "") == "ping") continue;
    return m;
  }
}

std::optional<json> ControlClient::receive_type(const std::string& type,
                                                std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    auto m =
        receive(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
    if (!m) return std::nullopt;
    if (m->value("type", "") == type) return m;
  }
  return std::nullopt;
}

bool ControlClient::closed_within(std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  char buf[4096];
  while (fd_ >= 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    const ssize_t got = ::read(fd_, buf, sizeof buf);
    if (got <= 0) return true;
    received_.append(buf, static_cast<std::size_t>(got));
  }
  return true;
}

std::optional<json> ControlClient::greet() {
  if (!send(control::make_hello())) return std::nullopt;
  return receive_type("hello");
}

std::optional<json> ControlClient::authenticate(const control::Secret& key) {
  const auto hello = greet();
  if (!hello || !hello->contains("auth")) return std::nullopt;
  const std::string challenge = (*hello)["auth"].value("challenge", "");
  const std::string nonce = control::random_hex(control::kChallengeBytes);
  if (!send(control::message(
          "auth", {{"nonce", nonce}, {"proof", control::master_proof(key, challenge, nonce)}}))) {
    return std::nullopt;
  }
  auto ok = receive();
  if (!ok || ok->value("type", "") != "auth_ok") return std::nullopt;
  keys_ = control::derive_session_keys(key, challenge, nonce);
  keyed_ = true;
  return ok;
}

json load_message(const std::string& profile_text, std::size_t workers) {
  control::LoadRequest load;
  load.profile_text = profile_text;
  load.profile_file = "test.xml";
  load.host = "127.0.0.1";
  load.seed = 1;
  load.token = 7;
  load.workers = workers;
  return control::to_json(load);
}

json control_message(const std::string& type, json fields) {
  return control::message(type, std::move(fields));
}

int connect_data(std::uint16_t port, std::uint32_t token, std::uint32_t group,
                 std::uint32_t strand) {
  ControlClient c(port);
  if (!c.connected()) return -1;
  const auto header = transport::encode(transport::ConnectionHeader{token, group, strand, 0});
  if (!c.send_raw(std::string(header.begin(), header.end()))) return -1;
  return c.release();
}

std::uint16_t negotiated_port(const json& loaded) {
  const auto ports = loaded.find("ports");
  if (ports == loaded.end() || !ports->is_object() || !ports->contains("0")) return 0;
  return (*ports)["0"].get<std::uint16_t>();
}

}  // namespace volley::test
