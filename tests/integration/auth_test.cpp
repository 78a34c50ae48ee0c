// Authentication end to end: a real `volley serve --key-file` process, real `volley run` masters
// with no key, the wrong key and the right one, a relay that records an authenticated session so
// it can be replayed and spliced byte for byte, and data connections with a wrong token.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/control_client.hpp"
#include "support/net.hpp"
#include "support/process.hpp"
#include "support/serve.hpp"
#include "support/temp_dir.hpp"
#include "volley/control/auth.hpp"

namespace volley::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

/// One strand whose master side connects; on the slave it accepts and then thinks for 20 s.
const char* kAcceptAndWait = R"XML(<?xml version="1.0"?>
<profile name="wait"><group nthreads="1">
  <transaction iterations="1">
    <flowop type="connect" options="remotehost=127.0.0.1 protocol=tcp"/>
    <flowop type="think" options="duration=20s"/>
  </transaction>
</group></profile>)XML";

/// A key file of 32 random bytes, as hex, mode 0600.
std::filesystem::path write_key(const TempDir& dir, const std::string& name, control::Secret& key) {
  const std::string raw = control::random_bytes(32);
  key.assign(raw.begin(), raw.end());
  const auto path = dir.write(name, control::to_hex(raw) + "\n");
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  return path;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// `volley serve --key-file KEY` on a loopback port of its own, logging; stopped by PID.
class KeyedServe {
 public:
  explicit KeyedServe(const std::filesystem::path& key, std::vector<std::string> extra = {})
      : port_(free_port()), process_(args(key, std::move(extra))) {
    const auto deadline = Clock::now() + 10s;
    while (Clock::now() < deadline) {
      if (ControlClient(port_).connected()) break;
      std::this_thread::sleep_for(20ms);
    }
    // The probe above is a peer that never authenticated: it costs one line, like any other.
    if (!wait_for_log("refused")) ADD_FAILURE() << "volley serve did not listen: " << log();
  }
  ~KeyedServe() {
    process_.signal(SIGTERM);
    (void)process_.wait(5s);
  }
  KeyedServe(const KeyedServe&) = delete;
  KeyedServe& operator=(const KeyedServe&) = delete;
  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] std::string log() const { return process_.stderr_so_far(); }
  /// Waits until the log has `n` lines containing `what` (the slave logs after it acts).
  bool wait_for_log(const std::string& what, std::size_t n = 1) const {
    const auto deadline = Clock::now() + 10s;
    while (Clock::now() < deadline) {
      if (count(log(), what) >= n) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

 private:
  std::vector<std::string> args(const std::filesystem::path& key, std::vector<std::string> extra) {
    std::vector<std::string> a = {
        VOLLEY_BINARY, "serve", "--listen",   fmt::format("127.0.0.1:{}", port_),
        "--workers",   "1",     "--key-file", key.string()};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  std::uint16_t port_;
  Process process_;
};

/// A TCP relay on a loopback port for one connection to `target`, recording both directions.
class Relay {
 public:
  explicit Relay(std::uint16_t target) : target_(target) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t len = sizeof a;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ::listen(listener_, 4);
    thread_ = std::thread([this] { run(); });
  }
  ~Relay() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;
  [[nodiscard]] std::uint16_t port() const { return port_; }
  std::string to_slave() {
    std::lock_guard lock(mutex_);
    return to_slave_;
  }
  std::string to_master() {
    std::lock_guard lock(mutex_);
    return to_master_;
  }

 private:
  void run() {
    pollfd p{listener_, POLLIN, 0};
    while (!stop_ && ::poll(&p, 1, 50) <= 0) {
    }
    if (stop_) return;
    const int master = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    ControlClient upstream(target_);
    const int slave = upstream.release();
    const auto deadline = Clock::now() + 60s;
    bool open = master >= 0 && slave >= 0;
    while (open && !stop_ && Clock::now() < deadline) {
      pollfd fds[2] = {{master, POLLIN, 0}, {slave, POLLIN, 0}};
      if (::poll(fds, 2, 50) <= 0) continue;
      for (int i = 0; i < 2 && open; ++i) {
        if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        char buf[65536];
        const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
        if (n <= 0) {
          open = false;
          break;
        }
        {
          std::lock_guard lock(mutex_);
          (i == 0 ? to_slave_ : to_master_).append(buf, static_cast<std::size_t>(n));
        }
        const int to = i == 0 ? slave : master;
        for (ssize_t done = 0; done < n;) {
          const ssize_t w =
              ::send(to, buf + done, static_cast<std::size_t>(n - done), MSG_NOSIGNAL);
          if (w <= 0) {
            open = false;
            break;
          }
          done += w;
        }
      }
    }
    if (master >= 0) ::close(master);
    if (slave >= 0) ::close(slave);
  }

  std::uint16_t target_;
  std::uint16_t port_ = 0;
  int listener_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::string to_slave_;
  std::string to_master_;
};

/// The frames of a recorded byte stream (length prefix included), in order.
std::vector<std::string> split_frames(const std::string& bytes) {
  std::vector<std::string> frames;
  std::size_t at = 0;
  while (at + 4 <= bytes.size()) {
    std::uint32_t n = 0;
    for (std::size_t i = 0; i < 4; ++i) n = (n << 8) | static_cast<unsigned char>(bytes[at + i]);
    if (at + 4 + n > bytes.size()) break;
    frames.push_back(bytes.substr(at, 4 + n));
    at += 4 + n;
  }
  return frames;
}

TEST(Auth, WithoutTheKeyOrWithAWrongOneTheSlaveOnlyRefusesThenServesTheRightMaster) {
  TempDir dir;
  control::Secret key;
  control::Secret other;
  const auto key_file = write_key(dir, "key", key);
  const auto wrong_file = write_key(dir, "wrong", other);
  const auto profile = dir.write("pp.xml", pingpong("2", "300ms"));
  KeyedServe serve(key_file);
  const std::string port = std::to_string(serve.port());

  const auto none = run_volley({"run", profile.string(), "-P", port, "-q"});
  EXPECT_EQ(none.exit_code, 1) << none.err;
  EXPECT_NE(none.err.find("the slave requires a key"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("--key-file"), std::string::npos) << none.err;
  ASSERT_TRUE(serve.wait_for_log("refused", 2)) << serve.log();

  const auto wrong =
      run_volley({"run", profile.string(), "-P", port, "-q", "--key-file", wrong_file.string()});
  EXPECT_EQ(wrong.exit_code, 1) << wrong.err;
  EXPECT_NE(wrong.err.find("the master's key is not this slave's key"), std::string::npos)
      << wrong.err;
  ASSERT_TRUE(serve.wait_for_log("refused", 3)) << serve.log();

  // One line each, and nothing else done: no session, no load, no data listener.
  const std::string log = serve.log();
  EXPECT_EQ(count(log, "\n"), 4U) << log;  // "listening on", the probe and the two refusals
  EXPECT_EQ(count(log, "loaded"), 0U) << log;
  EXPECT_EQ(count(log, "connected"), 0U) << log;

  const auto right =
      run_volley({"run", profile.string(), "-P", port, "-q", "--key-file", key_file.string()});
  EXPECT_EQ(right.exit_code, 0) << right.err;
  EXPECT_EQ(count(serve.log(), "connected (authenticated)"), 1U) << serve.log();

  // The environment variable names the key as well as the flag does.
  ::setenv("VOLLEY_KEY_FILE", key_file.c_str(), 1);
  const auto from_environment = run_volley({"run", profile.string(), "-P", port, "-q"});
  ::unsetenv("VOLLEY_KEY_FILE");
  EXPECT_EQ(from_environment.exit_code, 0) << from_environment.err;
}

TEST(Auth, AMasterWithAKeyRefusesASlaveWithoutOne) {
  TempDir dir;
  control::Secret key;
  const auto key_file = write_key(dir, "key", key);
  const auto profile = dir.write("pp.xml", pingpong("2", "300ms"));
  const auto port = free_port();
  Process serve({VOLLEY_BINARY, "serve", "--listen", fmt::format("127.0.0.1:{}", port), "-q"});
  for (int i = 0; i < 500 && !ControlClient(port).connected(); ++i)
    std::this_thread::sleep_for(20ms);
  const auto r = run_volley(
      {"run", profile.string(), "-P", std::to_string(port), "-q", "--key-file", key_file.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("the slave has no key"), std::string::npos) << r.err;
  serve.signal(SIGTERM);
  EXPECT_EQ(serve.wait(5s).exit_code, 0);
}

TEST(Auth, ARecordedSessionReplayedOrSplicedIsRefusedAndTheKeyNeverCrossesTheWire) {
  TempDir dir;
  control::Secret key;
  const auto key_file = write_key(dir, "key", key);
  const auto profile = dir.write("pp.xml", pingpong("2", "300ms"));
  KeyedServe serve(key_file);
  std::string to_slave;
  std::string to_master;
  {
    Relay relay(serve.port());
    const auto r = run_volley({"run", profile.string(), "-P", std::to_string(relay.port()), "-q",
                               "--key-file", key_file.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    to_slave = relay.to_slave();
    to_master = relay.to_master();
  }
  const auto frames = split_frames(to_slave);
  ASSERT_GE(frames.size(), 4U);  // hello, auth, load, start, ...
  EXPECT_NE(frames[1].find("\"auth\""), std::string::npos);
  EXPECT_NE(frames[2].find("\"load\""), std::string::npos);

  // The key, raw or as the hex in its file, is nowhere in either direction.
  const std::string raw(key.begin(), key.end());
  const std::string hex = control::to_hex(raw);
  for (const std::string* capture : {&to_slave, &to_master}) {
    EXPECT_EQ(capture->find(raw), std::string::npos);
    EXPECT_EQ(capture->find(hex), std::string::npos);
    EXPECT_EQ(capture->find(hex.substr(0, 16)), std::string::npos);
  }

  // Replayed byte for byte: the slave's challenge is new, so the old proof fails.
  const std::size_t refusals = count(serve.log(), "refused");
  {
    ControlClient replay(serve.port());
    ASSERT_TRUE(replay.send_raw(to_slave));
    EXPECT_TRUE(replay.closed_within(10s));
    EXPECT_NE(replay.received_bytes().find("authentication failed"), std::string::npos)
        << replay.received_bytes();
    EXPECT_EQ(replay.received_bytes().find("loaded"), std::string::npos);
  }
  ASSERT_TRUE(serve.wait_for_log("refused", refusals + 1)) << serve.log();

  // Spliced: the recorded load, sent in a fresh session authenticated with the key, fails its
  // MAC (other session keys); the session ends without loading anything.
  {
    ControlClient splice(serve.port());
    ASSERT_TRUE(splice.authenticate(key));
    ASSERT_TRUE(splice.send_raw(frames[2]));
    EXPECT_TRUE(splice.closed_within(10s));
  }
  // And the same recorded frames after the recorded hello, in a fresh session: refused as well.
  {
    ControlClient reordered(serve.port());
    ASSERT_TRUE(reordered.send_raw(frames[0] + frames[2] + frames[1]));
    EXPECT_TRUE(reordered.closed_within(10s));
    EXPECT_EQ(reordered.received_bytes().find("loaded"), std::string::npos);
  }
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(count(serve.log(), "loaded profile"), 1U) << serve.log();  // the real run's only
}

TEST(Auth, DataConnectionsNeedTheSessionsTokenNotTheOneOnTheControlWire) {
  TempDir dir;
  control::Secret key;
  const auto key_file = write_key(dir, "key", key);
  KeyedServe serve(key_file, {"--header-timeout", "300ms"});
  ControlClient c(serve.port());
  ASSERT_TRUE(c.authenticate(key));
  ASSERT_TRUE(c.send(load_message(kAcceptAndWait)));  // token 7 on the wire
  const auto loaded = c.receive_type("loaded");
  ASSERT_TRUE(loaded);
  ASSERT_TRUE(c.send(control_message("start", {{"master_port", 1}})));
  ASSERT_TRUE(c.send(control_message("proceed", {{"step", 0}})));
  const auto port = negotiated_port(*loaded);
  ASSERT_NE(port, 0);

  auto closed_within = [](int fd, std::chrono::milliseconds limit) {
    pollfd p{fd, POLLIN, 0};
    char b = 0;
    const bool closed =
        ::poll(&p, 1, static_cast<int>(limit.count())) > 0 && ::read(fd, &b, 1) <= 0;
    ::close(fd);
    return closed;
  };
  // The token as it crossed the control wire is not the run's token: closed.
  EXPECT_TRUE(closed_within(connect_data(port, 7), 5s));
  // Any other wrong token: closed.
  EXPECT_TRUE(closed_within(connect_data(port, 7 ^ c.data_mask() ^ 1), 5s));
  // No header at all: closed after --header-timeout.
  {
    ControlClient silent(port);
    ASSERT_TRUE(silent.connected());
    EXPECT_TRUE(silent.closed_within(5s));
  }
  // The session's token: taken (the strand holds it while it thinks).
  EXPECT_FALSE(closed_within(connect_data(port, 7 ^ c.data_mask()), 1s));
}

/// How many data connections the slave's log says it closed: one per line that names one, plus
/// the "(and N more ...)" and "N more ..." counts of the lines the throttle left out.
std::size_t closed_data_connections(const std::string& log) {
  std::size_t total = 0;
  std::size_t at = 0;
  while (at < log.size()) {
    const auto end = std::min(log.find('\n', at), log.size());
    const std::string line = log.substr(at, end - at);
    at = end + 1;
    const std::string prefix = "volley serve: ";
    if (line.rfind(prefix + "data connection from ", 0) == 0) {
      ++total;
      if (const auto more = line.find(" (and "); more != std::string::npos) {
        total += std::stoul(line.substr(more + 6));
      }
    } else if (line.find(" more data connections closed since the last such line; the last: ") !=
               std::string::npos) {
      total += std::stoul(line.substr(prefix.size()));
    }
  }
  return total;
}

TEST(Auth, ClosedDataConnectionsAreLoggedWithTheirPeerAndAFloodCostsAFewLines) {
  TempDir dir;
  control::Secret key;
  const auto key_file = write_key(dir, "key", key);
  KeyedServe serve(key_file, {"--header-timeout", "300ms"});
  auto c = std::make_unique<ControlClient>(serve.port());
  ASSERT_TRUE(c->authenticate(key));
  ASSERT_TRUE(c->send(load_message(kAcceptAndWait)));
  const auto loaded = c->receive_type("loaded");
  ASSERT_TRUE(loaded);
  ASSERT_TRUE(c->send(control_message("start", {{"master_port", 1}})));
  const auto port = negotiated_port(*loaded);
  ASSERT_NE(port, 0);

  // A late header: one line, naming the peer and the flag.
  ControlClient silent(port);
  ASSERT_TRUE(silent.connected());
  ASSERT_TRUE(serve.wait_for_log("closed: no header within 300 ms (volley serve --header-timeout)"))
      << serve.log();
  // A flood of wrong tokens, as from an attacker who opens connection after connection: the log
  // gets about a line a second, and each says how many it left out.
  constexpr std::size_t kFlood = 300;
  const auto flood_start = Clock::now();
  for (std::size_t i = 0; i < kFlood; ++i) {
    const int fd = connect_data(port, 7);
    ASSERT_GE(fd, 0);
    // Closed by the slave before the next: none is still queued when the run ends below.
    pollfd p{fd, POLLIN, 0};
    char b = 0;
    EXPECT_TRUE(::poll(&p, 1, 5000) > 0 && ::read(fd, &b, 1) <= 0);
    ::close(fd);
  }
  c.reset();  // the session ends, and with it the run: the throttle says what it left out
  const auto deadline = Clock::now() + 20s;
  while (closed_data_connections(serve.log()) < kFlood + 1 && Clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - flood_start).count();
  const std::string log = serve.log();
  EXPECT_EQ(closed_data_connections(log), kFlood + 1) << log;
  EXPECT_NE(log.find("closed: wrong run token"), std::string::npos) << log;
  std::size_t lines = 0;  // lines about data connections
  for (std::size_t at = 0; (at = log.find("data connection", at)) != std::string::npos;) {
    ++lines;
    at = log.find('\n', at);
  }
  EXPECT_LE(lines, 3 + static_cast<std::size_t>(seconds)) << log;
  EXPECT_EQ(log.find('\x1b'), std::string::npos);
  EXPECT_NE(log.find("data connection from 127.0.0.1:"), std::string::npos) << log;
}

TEST(Auth, NonLoopbackWithoutAKeyRefusesToStartUnlessInsecure) {
  const auto port = free_port();
  const auto refused =
      run_volley({"serve", "--listen", fmt::format("0.0.0.0:{}", port), "-q"}, 10s);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("without a key"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--insecure"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--key-file"), std::string::npos) << refused.err;

  Process insecure(
      {VOLLEY_BINARY, "serve", "--listen", fmt::format("0.0.0.0:{}", port), "-q", "--insecure"});
  bool listening = false;
  for (int i = 0; i < 500 && !listening; ++i) {
    listening = ControlClient(port).connected();
    if (!listening) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(listening) << insecure.stderr_so_far();
  insecure.signal(SIGTERM);
  EXPECT_EQ(insecure.wait(5s).exit_code, 0);
}

// With no address given (no --listen, a port alone, or uperf's `-s -P PORT`), a slave without a
// key listens on loopback and says how to serve other hosts; with a key or --insecure it listens
// on every address.
TEST(Auth, WithoutAKeyTheDefaultAddressIsLoopbackAndTheSlaveSaysHowToServeOthers) {
  TempDir dir;
  const auto key_file = dir.write("key", std::string(64, 'a') + "\n");
  std::filesystem::permissions(
      key_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  struct Case {
    std::vector<std::string> args;
    std::string listening;  ///< what the log says it listens on
    bool advice;            ///< whether it says how to serve other hosts
  };
  const auto port = std::to_string(free_port());
  const std::vector<Case> cases = {
      {{"serve", "--listen", port}, "listening on 127.0.0.1:" + port + " ", true},
      {{"-s", "-P", port}, "listening on 127.0.0.1:" + port + " ", true},
      {{"serve", "--listen", ":" + port, "--insecure"}, ":" + port + " (IPv6 and IPv4)", false},
      {{"serve", "--listen", port, "--key-file", key_file.string()},
       ":" + port + " (IPv6 and IPv4)",
       false},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {VOLLEY_BINARY};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    Process serve(argv);
    bool listening = false;
    for (int i = 0; i < 500 && !listening; ++i) {
      listening = serve.stderr_so_far().find("listening on") != std::string::npos &&
                  ControlClient(static_cast<std::uint16_t>(std::stoi(port))).connected();
      if (!listening) std::this_thread::sleep_for(20ms);
    }
    const std::string log = serve.stderr_so_far();
    EXPECT_TRUE(listening) << c.args[0] << " " << c.args[1] << ": " << log;
    EXPECT_NE(log.find(c.listening), std::string::npos) << log;
    EXPECT_EQ(log.find("loopback only") != std::string::npos, c.advice) << log;
    if (c.advice) {
      EXPECT_NE(log.find("--key-file"), std::string::npos) << log;
      EXPECT_NE(log.find("--insecure"), std::string::npos) << log;
    }
    serve.signal(SIGTERM);
    EXPECT_EQ(serve.wait(5s).exit_code, 0) << log;
  }
}

TEST(Auth, KeyFilesAndFlagsAreCheckedWithSentencesThatNameThem) {
  TempDir dir;
  const auto short_key = dir.write("short", "0123456789abcdef\n");
  const auto r =
      run_volley({"serve", "--listen", "127.0.0.1:0", "--key-file", short_key.string()}, 10s);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("at least 64"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("openssl rand -hex 32"), std::string::npos) << r.err;

  const auto missing = run_volley(
      {"run", (dir.path() / "none.xml").string(), "--key-file", (dir.path() / "absent").string()},
      10s);
  EXPECT_EQ(missing.exit_code, 2);

  const auto bad_deadline =
      run_volley({"serve", "--listen", "127.0.0.1:0", "--header-timeout", "1h"}, 10s);
  EXPECT_EQ(bad_deadline.exit_code, 2);
  EXPECT_NE(bad_deadline.err.find("--header-timeout"), std::string::npos) << bad_deadline.err;

  // A key others can read is used, with a warning that says how to fix it.
  control::Secret key;
  const auto open_key = write_key(dir, "open", key);
  std::filesystem::permissions(open_key, std::filesystem::perms::others_read,
                               std::filesystem::perm_options::add);
  const auto port = free_port();
  Process serve({VOLLEY_BINARY, "serve", "--listen", fmt::format("127.0.0.1:{}", port),
                 "--key-file", open_key.string()});
  for (int i = 0; i < 500 && !ControlClient(port).connected(); ++i)
    std::this_thread::sleep_for(20ms);
  serve.signal(SIGTERM);
  const auto done = serve.wait(5s);
  EXPECT_NE(done.err.find("can be read by other users"), std::string::npos) << done.err;
  EXPECT_NE(done.err.find("chmod 600"), std::string::npos) << done.err;
}

TEST(Auth, PeerStringsAreEscapedBeforeTheyReachTheLog) {
  TempDir dir;
  control::Secret key;
  const auto key_file = write_key(dir, "key", key);
  KeyedServe serve(key_file);
  ControlClient c(serve.port());
  ASSERT_TRUE(c.send(control_message("hello", {{"magic", "volley-control"},
                                               {"protocol_version", 99},
                                               {"volley_version", "\x1b[2J\nfake line"}})));
  EXPECT_TRUE(c.closed_within(10s));
  ASSERT_TRUE(serve.wait_for_log("refused", 2)) << serve.log();
  const std::string log = serve.log();
  EXPECT_EQ(log.find('\x1b'), std::string::npos);
  EXPECT_NE(log.find("\\x1b[2J\\x0afake line"), std::string::npos) << log;
  EXPECT_EQ(count(log, "\n"), 3U) << log;  // "listening on", the probe, the refusal: no forged line
}

}  // namespace
}  // namespace volley::test
