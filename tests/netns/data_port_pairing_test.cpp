// A negotiated data port is a pair: the slave's kernel picks a TCP port and the slave listens for
// UDP on the same number (the master learns only that one), which may already be some other
// socket's UDP port (seen once in CI: two UDP runs side by side, "cannot listen for UDP data
// connections ... Address already in use"). Engine::open_listeners picks the pair again then,
// holding the passed-over TCP ports so that the kernel does not pick them again.
//
// The slave's namespace is shaped so that the kernel's TCP picks are 8 ports whose UDP twins are
// all taken but at most one: ip_local_port_range is 40000-40015, the test holds TCP listeners on
// 40008-40015 (left free for UDP: the slave's own UDP connection sockets take ports there) and
// UDP sockets on 40000-40007 but kFreeTwin. The first pick is then kFreeTwin at most 1 time in 8;
// on Linux >= 4.6 never, as a SO_REUSEADDR listener's bind scans the odd offsets of the range's
// lower half first (40001, 40003, ...) and kFreeTwin is even. Without the retry the run fails;
// with it, 8 distinct picks reach kFreeTwin. The master is in a namespace of its own, so its
// control connection's port does not take one of the 8. Also: two workers (two pairs), every
// twin taken (the run fails, saying what happened and what to do), and a port the profile names
// (not picked again). Needs root (CAP_NET_ADMIN) and `ip`: skipped otherwise.
//
//   master 198.18.7.1 ── veth ── 198.18.7.2 slave (ports 40000-40015 shaped as above)
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/local_run.hpp"
#include "support/netns.hpp"
#include "support/process.hpp"
#include "support/slave_process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kPairingSlave = "198.18.7.2";
constexpr std::uint16_t kPairingControlPort = 20000;
constexpr std::uint16_t kLow = 40000;            // the slave's ephemeral ports: kLow..kLow+15
constexpr std::uint16_t kFreeTwin = 40006;       // the one pickable TCP port whose UDP twin is free
constexpr std::uint16_t kOtherFreeTwin = 40004;  // a second one, for a second worker
constexpr std::uint64_t kPairingIterations = 50;

/// Sockets bound to 0.0.0.0:PORT (which conflicts with a bind to any address), a TCP one
/// listening (which conflicts even with SO_REUSEADDR), closed by the destructor.
class HeldPorts {
 public:
  HeldPorts() = default;
  ~HeldPorts() {
    for (const int fd : fds_) ::close(fd);
  }
  HeldPorts(const HeldPorts&) = delete;
  HeldPorts& operator=(const HeldPorts&) = delete;

  /// Holds `port` for `type` (SOCK_STREAM or SOCK_DGRAM) in the calling thread's namespace; ""
  /// or what failed.
  std::string hold(int type, std::uint16_t port) {
    const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
    if (fd < 0) return fmt::format("socket: {}", std::strerror(errno));
    fds_.push_back(fd);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
        (type == SOCK_STREAM && ::listen(fd, 1) != 0)) {
      return fmt::format("cannot hold port {}: {}", port, std::strerror(errno));
    }
    return {};
  }

 private:
  std::vector<int> fds_;
};

class DataPortPairing : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = netns_unavailable(); !why.empty()) GTEST_SKIP() << why;
    if (auto problem = hosts_.create({
            {"-n", m(), "link", "add", "name", "to-s", "type", "veth", "peer", "name", "to-m",
             "netns", s()},
            {"-n", m(), "addr", "add", "198.18.7.1/24", "dev", "to-s"},
            {"-n", s(), "addr", "add", std::string(kPairingSlave) + "/24", "dev", "to-m"},
            {"-n", m(), "link", "set", "dev", "lo", "up"},
            {"-n", m(), "link", "set", "dev", "to-s", "up"},
            {"-n", s(), "link", "set", "dev", "lo", "up"},
            {"-n", s(), "link", "set", "dev", "to-m", "up"},
        });
        !problem.empty()) {
      GTEST_SKIP() << "cannot make network namespaces here: " << problem;
    }
    Process set(netns_exec(
        s(),
        {"/bin/sh", "-c",
         fmt::format("echo '{} {}' > /proc/sys/net/ipv4/ip_local_port_range", kLow, kLow + 15)}));
    ASSERT_EQ(set.wait(20s).exit_code, 0);
    // Not loopback: the slave needs a key, and the master the same one.
    key_ = dir_.write("key", std::string(64, '7') + "\n");
    fs::permissions(key_, fs::perms::owner_read | fs::perms::owner_write);
  }

  const std::string& m() const { return hosts_[0]; }
  const std::string& s() const { return hosts_[1]; }

  /// Holds, in the slave's namespace, TCP on the range's upper half and UDP on every port of its
  /// lower half but the `free_twins`.
  void hold_ports(const std::vector<std::uint16_t>& free_twins) {
    std::string problem;
    ASSERT_TRUE(in_namespace(s(), [&] {
      for (std::uint16_t p = kLow; p < kLow + 16 && problem.empty(); ++p) {
        if (std::find(free_twins.begin(), free_twins.end(), p) != free_twins.end()) continue;
        problem = held_.hold(p < kLow + 8 ? SOCK_DGRAM : SOCK_STREAM, p);
      }
    }));
    ASSERT_EQ(problem, "");
  }

  /// Starts a one-process slave of `workers` workers (a negotiated port to pair per worker),
  /// then runs a UDP ping-pong of `strands` strands (their connects with `options` added) from
  /// the master's namespace; what the master printed.
  ProcessResult run(int workers = 1, int strands = 1, const std::string& options = "") {
    slave_.emplace(netns_exec(s(), serve_command(listen_address(kPairingSlave, kPairingControlPort),
                                                 {"-q", "--key-file", key_.string(), "--workers",
                                                  std::to_string(workers), "--processes", "1"})),
                   kPairingSlave, kPairingControlPort, m());
    EXPECT_TRUE(reachable_from(m(), kPairingSlave, kPairingControlPort)) << slave_->log();
    const fs::path profile = dir_.write("p.xml", fmt::format(R"XML(<?xml version="1.0"?>
<profile name="udp pair">
  <group nthreads="{}">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$s protocol=udp {}"/></transaction>
    <transaction iterations="{}">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML",
                                                             strands, options, kPairingIterations));
    Process master(netns_exec(
        m(), {VOLLEY_BINARY, "run", profile.string(), "-P", std::to_string(kPairingControlPort),
              "--set", fmt::format("s={}", kPairingSlave), "--json", json_path().string(), "-q",
              "--key-file", key_.string()}));
    ProcessResult r = master.wait(60s);
    EXPECT_FALSE(r.timed_out) << "the run hung:\n" << r.out << r.err << slave_->log();
    return r;
  }

  fs::path json_path() const { return dir_.path() / "r.json"; }

  /// Whether the run of `strands` strands mirrored every byte of its ping-pong both ways.
  void expect_every_byte_mirrored(int strands) const {
    const json doc = read_json(json_path());
    ASSERT_FALSE(doc.is_discarded());
    EXPECT_EQ(doc["status"], "ok") << doc["failure"];
    const json& mine = doc.at("groups").at(0).at("transactions").at(1).at("flowops");
    const json& theirs =
        doc.at("slaves").at(0).at("groups").at(0).at("transactions").at(1).at("flowops");
    const std::uint64_t bytes = static_cast<std::uint64_t>(strands) * kPairingIterations * 64;
    EXPECT_EQ(mine.at(0).at("bytes_written").get<std::uint64_t>(), bytes);
    EXPECT_EQ(theirs.at(0).at("bytes_read").get<std::uint64_t>(), bytes);
    EXPECT_EQ(theirs.at(1).at("bytes_written").get<std::uint64_t>(), bytes);
    EXPECT_EQ(mine.at(1).at("bytes_read").get<std::uint64_t>(), bytes);
  }

  Namespaces hosts_{{"volley-pairm", "volley-pairs"}};
  TempDir dir_;
  fs::path key_;
  HeldPorts held_;  // after hosts_: closed before the namespaces are deleted
  std::optional<SlaveProcess> slave_;
};

TEST_F(DataPortPairing, ANegotiatedPortWhoseUdpTwinIsTakenIsPickedAgain) {
  hold_ports({kFreeTwin});
  const ProcessResult r = run();
  slave_->stop();
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out << slave_->log();
  expect_every_byte_mirrored(1);
}

// Two workers, a negotiated port each, two free twins among the 8 picks: the second worker's
// pairing must not give up on the ports the first one passed over.
TEST_F(DataPortPairing, EveryWorkersNegotiatedPortIsPaired) {
  hold_ports({kOtherFreeTwin, kFreeTwin});
  const ProcessResult r = run(2, 2);
  slave_->stop();
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out << slave_->log();
  expect_every_byte_mirrored(2);
}

TEST_F(DataPortPairing, EveryUdpTwinTakenFailsTheRunSayingSo) {
  hold_ports({});
  const ProcessResult r = run();
  slave_->stop();
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_NE(r.err.find("cannot listen for UDP data connections on 198.18.7.2:4000"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("Address already in use"), std::string::npos) << r.err;
  // Not "rejected the profile": the profile is fine, the slave could not listen.
  EXPECT_NE(r.err.find("slave 198.18.7.2 could not set up the run:"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("rejected the profile"), std::string::npos) << r.err;
  // It says that the number was not the profile's, that it was tried again, and what to do.
  EXPECT_NE(r.err.find("8 negotiated ports in a row"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ip_local_port_range"), std::string::npos) << r.err;
}

// A port the profile names is not ours to change: its UDP twin taken fails the run at once,
// naming it.
TEST_F(DataPortPairing, AProfilesPortWhoseUdpTwinIsTakenFailsAtOnce) {
  hold_ports({kFreeTwin});
  const ProcessResult r = run(1, 1, "port=40003");
  slave_->stop();
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_NE(r.err.find("cannot listen for UDP data connections on 198.18.7.2:40003: Address "
                       "already in use"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("negotiated"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace volley::test
