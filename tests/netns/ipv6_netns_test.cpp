// IPv6 between two hosts: the master and a slave each in a network namespace of its own, joined
// by a veth pair with addresses in the IPv6 benchmarking range 2001:2::/48 (RFC 5180), plus
// link-local addresses reached with a zone (fe80::2%to-s):
//
//   master 2001:2::1, fe80::1 (to-s) ── veth ── (to-m) 2001:2::2, fe80::2 slave
//
// The slave is `volley serve --listen 20000` (every address, dual stack) and the profile
// connects to it and accepts from it, over TCP and UDP. The addresses are added with `nodad`, so
// they are usable at once (duplicate address detection would hold them tentative for a second or
// more). Needs root (CAP_NET_ADMIN), `ip` and IPv6: skipped with a message otherwise.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kSlave = "2001:2::2";
constexpr const char* kSlaveLinkLocal = "fe80::2%to-s";  // as the master names it
constexpr std::uint16_t kControlPort = 20000;

std::string ip_binary() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
    if (fs::exists(p)) return p;
  }
  return {};
}

/// Runs `ip ARGS...`; "" or what went wrong.
std::string ip(const std::vector<std::string>& args) {
  std::vector<std::string> full{ip_binary()};
  full.insert(full.end(), args.begin(), args.end());
  Process p(full);
  const ProcessResult r = p.wait(20s);
  if (r.exit_code == 0) return {};
  std::string command = "ip";
  for (const auto& a : args) command += " " + a;
  return fmt::format("`{}` failed (exit {}): {}", command, r.exit_code, r.err);
}

/// Whether a TCP connect from inside namespace `ns` to [address]:port succeeds.
bool reachable_from(const std::string& ns, const std::string& address, std::uint16_t port) {
  bool ok = false;
  std::thread([&] {
    const int nsfd = ::open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (nsfd < 0) return;
    const bool entered = ::setns(nsfd, CLONE_NEWNET) == 0;
    ::close(nsfd);
    if (!entered) return;
    const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(port);
    ::inet_pton(AF_INET6, address.c_str(), &a.sin6_addr);
    ok = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    if (fd >= 0) ::close(fd);
  }).join();
  return ok;
}

std::unique_ptr<Process> in_namespace(const std::string& ns, std::vector<std::string> command) {
  std::vector<std::string> full{ip_binary(), "netns", "exec", ns};
  full.insert(full.end(), command.begin(), command.end());
  return std::make_unique<Process>(full);
}

/// Connects to $h and accepts from it, a ping-pong each way.
std::string both_ways(const std::string& protocol) {
  return fmt::format(R"XML(<?xml version="1.0"?>
<profile name="v6 two hosts">
  <group nthreads="2" name="out">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol={0}"/></transaction>
    <transaction duration="500ms">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
  <group nthreads="3" name="in">
    <transaction iterations="1"><flowop type="accept" options="remotehost=$h protocol={0} conn=2"/></transaction>
    <transaction duration="500ms">
      <flowop type="write" options="size=1k conn=2"/>
      <flowop type="read" options="size=16 conn=2"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect" options="conn=2"/></transaction>
  </group>
</profile>
)XML",
                     protocol);
}

json read_json(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in, nullptr, false);
}

class Ipv6Netns : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "network namespace tests need root (CAP_NET_ADMIN)";
    if (ip_binary().empty()) GTEST_SKIP() << "network namespace tests need `ip` (iproute2)";
    std::ifstream disabled("/proc/sys/net/ipv6/conf/all/disable_ipv6");
    int off = 0;
    if (!(disabled >> off) || off != 0) GTEST_SKIP() << "IPv6 is disabled or absent on this host";
    static std::atomic<int> counter{0};
    const std::string suffix = fmt::format("{}-{}", ::getpid(), counter++);
    master_ = "volley-6m-" + suffix;
    slave_ns_ = "volley-6s-" + suffix;
    for (const auto* ns : {&master_, &slave_ns_}) {
      if (auto problem = ip({"netns", "add", *ns}); !problem.empty()) GTEST_SKIP() << problem;
      created_.push_back(*ns);
    }
    const std::vector<std::vector<std::string>> steps = {
        {"-n", master_, "link", "add", "name", "to-s", "type", "veth", "peer", "name", "to-m",
         "netns", slave_ns_},
        {"-n", master_, "addr", "add", "2001:2::1/64", "dev", "to-s", "nodad"},
        {"-n", master_, "addr", "add", "fe80::1/64", "dev", "to-s", "nodad"},
        {"-n", slave_ns_, "addr", "add", std::string(kSlave) + "/64", "dev", "to-m", "nodad"},
        {"-n", slave_ns_, "addr", "add", "fe80::2/64", "dev", "to-m", "nodad"},
        {"-n", master_, "link", "set", "dev", "lo", "up"},
        {"-n", master_, "link", "set", "dev", "to-s", "up"},
        {"-n", slave_ns_, "link", "set", "dev", "lo", "up"},
        {"-n", slave_ns_, "link", "set", "dev", "to-m", "up"},
    };
    for (const auto& step : steps) {
      if (auto problem = ip(step); !problem.empty()) GTEST_SKIP() << "cannot build the link: " << problem;
    }
    key_ = dir_.write("key", std::string(64, '6') + "\n");
    fs::permissions(key_, fs::perms::owner_read | fs::perms::owner_write);
    // Every address (dual stack): not loopback, so with a key.
    slave_ = in_namespace(slave_ns_, {VOLLEY_BINARY, "serve", "--listen", std::to_string(kControlPort),
                                      "--workers", "1", "--key-file", key_.string()});
    for (int i = 0; i < 500 && !reachable_from(master_, kSlave, kControlPort); ++i) {
      std::this_thread::sleep_for(20ms);
    }
    ASSERT_TRUE(reachable_from(master_, kSlave, kControlPort)) << slave_->stderr_so_far();
  }

  void TearDown() override {
    if (slave_) {
      slave_->signal(SIGTERM);
      const ProcessResult r = slave_->wait(10s);
      EXPECT_FALSE(r.timed_out) << "the slave ignored SIGTERM";
      slave_log_ = r.err;
      slave_.reset();
    }
    for (const auto& ns : created_) ip({"netns", "del", ns});
  }

  /// `volley run` in the master's namespace with h=`host`; the JSON document.
  json run_master(const std::string& protocol, const std::string& host) {
    const auto profile = dir_.write(protocol + ".xml", both_ways(protocol));
    const auto out = dir_.path() / (protocol + ".json");
    const ProcessResult r =
        in_namespace(master_, {VOLLEY_BINARY, "run", profile.string(), "-P", std::to_string(kControlPort),
                               "--set", "h=" + host, "--json", out.string(), "-q", "--key-file",
                               key_.string()})
            ->wait(60s);
    EXPECT_FALSE(r.timed_out) << "the run did not end";
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out << slave_->stderr_so_far();
    return read_json(out);
  }

  TempDir dir_;
  fs::path key_;
  std::string master_;
  std::string slave_ns_;
  std::vector<std::string> created_;
  std::unique_ptr<Process> slave_;
  std::string slave_log_;
};

void expect_ok_tcp(const json& doc, const std::string& host) {
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  EXPECT_EQ(doc["slaves"][0]["host"], host);
  EXPECT_EQ(doc["totals"]["connections_established"].get<std::uint64_t>(), 5U);
  for (const auto& c : doc["comparison"]) {
    EXPECT_EQ(c["master_bytes"], c["slave_bytes"]) << c["host"];
    EXPECT_GT(c["master_bytes"].get<std::uint64_t>(), 0U) << c["host"];
  }
}

TEST_F(Ipv6Netns, TcpBothWaysOverTheBenchmarkingRange) {
  expect_ok_tcp(run_master("tcp", kSlave), kSlave);
  // The slave saw its master by its IPv6 address, bracketed apart from the port.
  EXPECT_NE(slave_->stderr_so_far().find("master [2001:2::1]:"), std::string::npos)
      << slave_->stderr_so_far();
}

TEST_F(Ipv6Netns, UdpBothWaysOverTheBenchmarkingRange) {
  const json doc = run_master("udp", kSlave);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  for (std::size_t g = 0; g < 2; ++g) {
    const auto& sent = doc["groups"][g]["transactions"][1]["flowops"][0]["datagrams"]["sent"];
    const auto& got =
        doc["slaves"][0]["groups"][g]["transactions"][1]["flowops"][0]["datagrams"]["received"];
    EXPECT_GT(sent.get<std::uint64_t>(), 0U) << "group " << g;
    EXPECT_GT(got.get<std::uint64_t>(), 0U) << "group " << g;
  }
}

TEST_F(Ipv6Netns, LinkLocalWithAZoneBothWays) {
  // The zone names the master's interface; the slave connects back to fe80::1 on its own.
  expect_ok_tcp(run_master("tcp", kSlaveLinkLocal), kSlaveLinkLocal);
}

}  // namespace
}  // namespace volley::test
