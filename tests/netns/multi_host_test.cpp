// Multi-host runs on a real (virtual) network: the master and two slaves each in a network
// namespace of their own, on different 198.18.0.0/15 subnets joined by veth pairs:
//
//   slave A (198.18.1.2) ── veth ── (198.18.1.1) master (198.18.2.1) ── veth ── (198.18.2.2) slave
//   B
//
// The slaves are real `volley serve` processes started with `ip netns exec` and stopped by PID;
// the master is `volley run` in its own namespace. The namespaces are made by each test under
// unique names and deleted when it ends, whatever happens. Needs root (CAP_NET_ADMIN) and `ip`:
// skipped with a message otherwise.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/netns.hpp"
#include "support/paced_profile.hpp"
#include "support/process.hpp"
#include "support/slave_process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kSlaveA = "198.18.1.2";
constexpr const char* kSlaveB = "198.18.2.2";
constexpr std::uint16_t kControlPort = 20000;  // each slave has a namespace of its own

/// Three namespaces (master, a, b) and the two veth links between them.
class Topology : public Namespaces {
 public:
  Topology() : Namespaces({"volley-m", "volley-a", "volley-b"}) {}
  [[nodiscard]] const std::string& master() const { return (*this)[0]; }
  [[nodiscard]] const std::string& a() const { return (*this)[1]; }
  [[nodiscard]] const std::string& b() const { return (*this)[2]; }

  /// Builds everything; returns "" or why it could not (then the test is skipped).
  std::string create() {
    const std::string& m = master();
    return Namespaces::create({
        {"-n", m, "link", "add", "name", "to-a", "type", "veth", "peer", "name", "to-m", "netns",
         a()},
        {"-n", m, "link", "add", "name", "to-b", "type", "veth", "peer", "name", "to-m", "netns",
         b()},
        {"-n", m, "addr", "add", "198.18.1.1/24", "dev", "to-a"},
        {"-n", m, "addr", "add", "198.18.2.1/24", "dev", "to-b"},
        {"-n", a(), "addr", "add", std::string(kSlaveA) + "/24", "dev", "to-m"},
        {"-n", b(), "addr", "add", std::string(kSlaveB) + "/24", "dev", "to-m"},
        {"-n", m, "link", "set", "dev", "lo", "up"},
        {"-n", m, "link", "set", "dev", "to-a", "up"},
        {"-n", m, "link", "set", "dev", "to-b", "up"},
        {"-n", a(), "link", "set", "dev", "lo", "up"},
        {"-n", a(), "link", "set", "dev", "to-m", "up"},
        {"-n", b(), "link", "set", "dev", "lo", "up"},
        {"-n", b(), "link", "set", "dev", "to-m", "up"},
    });
  }
};

json read_json(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in, nullptr, false);
}

/// Per-direction bytes of every transaction: the master's equal the sum of its slaves'.
void expect_equal_bytes(const json& doc) {
  const auto& groups = doc["groups"];
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (std::size_t t = 0; t < groups[g]["transactions"].size(); ++t) {
      std::uint64_t master_written = 0;
      std::uint64_t master_read = 0;
      for (const auto& f : groups[g]["transactions"][t]["flowops"]) {
        master_written += f["bytes_written"].get<std::uint64_t>();
        master_read += f["bytes_read"].get<std::uint64_t>();
      }
      std::uint64_t slaves_written = 0;
      std::uint64_t slaves_read = 0;
      for (const auto& slave : doc["slaves"]) {
        for (const auto& f : slave["groups"][g]["transactions"][t]["flowops"]) {
          slaves_written += f["bytes_written"].get<std::uint64_t>();
          slaves_read += f["bytes_read"].get<std::uint64_t>();
        }
      }
      EXPECT_EQ(master_written, slaves_read) << "group " << g << " transaction " << t;
      EXPECT_EQ(master_read, slaves_written) << "group " << g << " transaction " << t;
    }
  }
}

/// A group per slave: `open` (connect or accept) to $a and $b, then a ping-pong for `duration`.
std::string two_slave_profile(const std::string& open, const std::string& duration) {
  return fmt::format(R"XML(<?xml version="1.0"?>
<profile name="two subnets">
  <group nthreads="2" name="to-a">
    <transaction iterations="1"><flowop type="{0}" options="remotehost=$a protocol=tcp"/></transaction>
    <transaction duration="{1}">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
  <group nthreads="3" name="to-b">
    <transaction iterations="1"><flowop type="{0}" options="remotehost=$b protocol=tcp conn=2"/></transaction>
    <transaction duration="{1}">
      <flowop type="write" options="size=1k conn=2"/>
      <flowop type="read" options="size=rand(16,2k) conn=2"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect" options="conn=2"/></transaction>
  </group>
</profile>
)XML",
                     open, duration);
}

class MultiHost : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = netns_unavailable(); !why.empty()) GTEST_SKIP() << why;
    if (auto problem = topology_.create(); !problem.empty()) {
      GTEST_SKIP() << "cannot make network namespaces here: " << problem;
    }
    // Not loopback: the slaves need a key, and the master the same one.
    key_ = dir_.write("key", std::string(64, '5') + "\n");
    fs::permissions(key_, fs::perms::owner_read | fs::perms::owner_write);
    slave_a_ = start_slave(topology_.a(), kSlaveA);
    slave_b_ = start_slave(topology_.b(), kSlaveB);
    ASSERT_TRUE(reachable_from(topology_.master(), kSlaveA, kControlPort)) << slave_a_->log();
    ASSERT_TRUE(reachable_from(topology_.master(), kSlaveB, kControlPort)) << slave_b_->log();
  }

  void TearDown() override {
    // SIGTERM stops a slave promptly whatever it was doing; the destructor would too,
    // without checking it.
    for (auto* slave : {&slave_a_, &slave_b_}) {
      if (!*slave) continue;
      EXPECT_FALSE((*slave)->stop().timed_out) << "a slave ignored SIGTERM for 10 s";
      slave->reset();
    }
  }

  /// A `volley serve` in namespace `ns` on address:20000.
  std::unique_ptr<SlaveProcess> start_slave(const std::string& ns, const std::string& address) {
    return std::make_unique<SlaveProcess>(
        netns_exec(ns, serve_command(listen_address(address, kControlPort),
                                     {"-q", "--workers", "1", "--key-file", key_.string()})),
        address, kControlPort, ns);
  }

  /// `volley run` in the master's namespace against both slaves.
  std::unique_ptr<Process> start_master(const fs::path& profile, const fs::path& out) {
    return std::make_unique<Process>(
        netns_exec(topology_.master(),
                   {VOLLEY_BINARY, "run", profile.string(), "-P", std::to_string(kControlPort),
                    "--set", fmt::format("a={}", kSlaveA), "--set", fmt::format("b={}", kSlaveB),
                    "--json", out.string(), "-q", "-i", "200ms", "--key-file", key_.string()}));
  }

  /// Runs `profile` (a long one), does `interfere` 1.5 s in, and checks the master's report: it
  /// names slave B, exits 1 within `bound` of the interference, and keeps what was measured.
  void expect_slave_b_lost(const fs::path& profile, const std::function<void()>& interfere,
                           std::chrono::seconds bound) {
    const auto out = dir_.path() / "lost.json";
    auto master = start_master(profile, out);
    // The interference must come in the timed step. Under ThreadSanitizer on a loaded host the
    // set-up took longer than 1.5 s once: the report then had no timed step to keep.
#ifdef VOLLEY_SANITIZED
    std::this_thread::sleep_for(5s);
#else
    std::this_thread::sleep_for(1500ms);
#endif
    interfere();
    const auto at = std::chrono::steady_clock::now();
    const ProcessResult r = master->wait(60s);
    const auto took = std::chrono::steady_clock::now() - at;
    ASSERT_FALSE(r.timed_out) << "the master did not end within 60 s of losing slave B";
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_LT(took, bound) << "the master noticed only after "
                           << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                           << " ms";
    const json doc = read_json(out);
    ASSERT_FALSE(doc.is_discarded());
    EXPECT_EQ(doc["status"], "failed");
    ASSERT_TRUE(doc["failure"].is_string());
    EXPECT_NE(doc["failure"].get<std::string>().find(kSlaveB), std::string::npos) << doc["failure"];
    // What was measured before the loss is kept: both groups had done work.
    ASSERT_GE(doc.at("groups").at(0).at("transactions").size(), 2U) << doc.dump();
    ASSERT_GE(doc.at("groups").at(1).at("transactions").size(), 2U) << doc.dump();
    EXPECT_GT(doc["groups"][0]["transactions"][1]["transactions"].get<std::uint64_t>(), 0U);
    EXPECT_GT(doc["groups"][1]["transactions"][1]["transactions"].get<std::uint64_t>(), 0U);
  }

  /// Each interval both slaves answered holds every host's kernel counters (each in its own
  /// namespace), and each transaction with connections open on both ends has the slaves' TCP
  /// state beside the master's: as many connections on each end.
  static void expect_both_ends_per_interval(const json& doc) {
    std::size_t both_ends = 0;
    for (const json& interval : doc.at("intervals")) {
      if (interval.at("slave_counts").at("answered") != 2) continue;
      std::vector<std::string> hosts;
      for (const json& h : interval.at("kernel")) hosts.push_back(h.at("host").get<std::string>());
      std::sort(hosts.begin() + 1, hosts.end());
      EXPECT_EQ(hosts, (std::vector<std::string>{"master", kSlaveA, kSlaveB})) << interval.dump();
      // (At a step's end a slave, taking its part half a round trip later, may be past it.)
      for (const json& t : interval.at("transactions")) {
        if (!t.contains("tcp") || !t.contains("slave_tcp")) continue;
        if (t.at("tcp").at("connections") == t.at("slave_tcp").at("connections")) ++both_ends;
      }
    }
    EXPECT_GE(both_ends, 4U) << doc.at("intervals").dump();
  }

  TempDir dir_;
  fs::path key_;
  Topology topology_;  // destroyed after the slaves (members go in reverse order)
  std::unique_ptr<SlaveProcess> slave_a_;
  std::unique_ptr<SlaveProcess> slave_b_;
};

TEST_F(MultiHost, ConnectSideProfileOverTwoSubnets) {
  const auto profile = dir_.write("connect.xml", two_slave_profile("connect", "1s"));
  const auto out = dir_.path() / "r.json";
  const ProcessResult r = start_master(profile, out)->wait(60s);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const json doc = read_json(out);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  ASSERT_EQ(doc["slaves"].size(), 2U);
  EXPECT_EQ(doc["totals"]["connections_established"].get<std::uint64_t>(), 5U);
  EXPECT_GT(doc["groups"][0]["transactions"][1]["transactions"].get<std::uint64_t>(), 0U);
  EXPECT_GT(doc["groups"][1]["transactions"][1]["transactions"].get<std::uint64_t>(), 0U);
  for (const auto& slave : doc["slaves"]) {
    const bool is_a = slave["host"] == kSlaveA;
    EXPECT_EQ(slave["groups"][0]["strands"].get<std::uint64_t>(), is_a ? 2U : 0U);
    EXPECT_EQ(slave["groups"][1]["strands"].get<std::uint64_t>(), is_a ? 0U : 3U);
  }
  expect_equal_bytes(doc);
  expect_both_ends_per_interval(doc);
}

TEST_F(MultiHost, AcceptSideProfileOverTwoSubnets) {
  // The slaves connect back to the master, each to the master's address on its own subnet:
  // the master's data listener must accept on both.
  const auto profile = dir_.write("accept.xml", two_slave_profile("accept", "1s"));
  const auto out = dir_.path() / "r.json";
  const ProcessResult r = start_master(profile, out)->wait(30s);  // a 1 s run: a hang guard
  EXPECT_FALSE(r.timed_out) << "the run did not end";
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const json doc = read_json(out);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  EXPECT_EQ(doc["totals"]["connections_established"].get<std::uint64_t>(), 5U);
  EXPECT_GT(doc["groups"][1]["transactions"][1]["transactions"].get<std::uint64_t>(), 0U);
  expect_equal_bytes(doc);
}

TEST_F(MultiHost, LinkDownMidRunIsReportedWithinSeconds) {
  const auto profile = dir_.write("pp.xml", two_slave_profile("connect", "30s"));
  // A dead link is detected within 3 s (the link timeout); 8 s here is that plus slack for a
  // loaded machine, and still less than the 10 s control silence timeout.
  expect_slave_b_lost(
      profile,
      [this] {
        EXPECT_EQ(ip({"-n", topology_.master(), "link", "set", "dev", "to-b", "down"}), "");
      },
      8s);
}

TEST_F(MultiHost, SlaveKilledMidRunIsReportedPromptly) {
  const auto profile = dir_.write("pp.xml", two_slave_profile("connect", "30s"));
  expect_slave_b_lost(
      profile,
      [this] {
        slave_b_->signal(SIGKILL);
        slave_b_->stop(5s);
        slave_b_.reset();
      },
      8s);
  // Slave A, which lost its master mid-run, is idle again and serves the next master.
  const auto again = dir_.write("a-only.xml", R"XML(<?xml version="1.0"?>
<profile name="a only">
  <group nthreads="2">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$a protocol=tcp"/></transaction>
    <transaction duration="300ms"><flowop type="write" options="size=64"/><flowop type="read" options="size=64"/></transaction>
  </group>
</profile>
)XML");
  const ProcessResult r = start_master(again, dir_.path() / "again.json")->wait(60s);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// `volley search` across a subnet, as through --local (tests/integration/search_test.cpp): 2
// strands on slave A, each pacing its transactions at $r a second with 50 ms of think in each,
// can do at most 20 a second, so the highest rate whose p99 stays within 100 ms is about 20.
TEST_F(MultiHost, SearchFindsACapacityKnownByConstructionAcrossASubnet) {
  const auto profile = dir_.write("paced.xml", paced_think_profile("2", "$a", "2s", "50ms"));
  const auto out = dir_.path() / "search.json";
  Process search(
      netns_exec(topology_.master(),
                 {VOLLEY_BINARY, "search", profile.string(), "-P", std::to_string(kControlPort),
                  "--set", fmt::format("a={}", kSlaveA), "--vary", "r=4..80", "--target",
                  "p99<=100ms", "--json", out.string(), "-q", "--key-file", key_.string()}));
  const ProcessResult r = search.wait(180s);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json doc = read_json(out);
  const json& result = doc.at("search");
  ASSERT_TRUE(result.at("capacity").is_number()) << result.dump();
#ifdef VOLLEY_SANITIZED
  EXPECT_GE(result.at("capacity").get<double>(), 4.0) << result.dump();
#else
  EXPECT_GE(result.at("capacity").get<double>(), 19.0) << result.dump();
#endif
  EXPECT_LE(result.at("capacity").get<double>(), 21.0) << result.dump();
}

}  // namespace
}  // namespace volley::test
