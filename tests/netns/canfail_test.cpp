// Connects that fail for want of ephemeral ports, with and without canfail, through the real CLI:
// inside a network namespace of its own whose ip_local_port_range holds 64 ports (per
// namespace), the connect after the 64th to the slave's data port fails with EADDRNOTAVAIL, every
// time, as it did under load on a machine with 121,000 sockets in TIME_WAIT (uperf's
// tests/canfail.xml). What the user must see: with canfail the run may end "ok", but every failed
// operation is counted by kind on both sides, said in the report's header, and both sides'
// counts agree once the failures are counted; without canfail, or when a later flowop (a
// disconnect without canfail) meets the connection that was never opened, the run fails with a
// sentence that names that flowop and why. The accept side too: the slave connecting, its mirror
// of the master's accept, must not make the master wait for connections that never come. Needs
// root and `ip`: skipped with a message otherwise.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/netns.hpp"
#include "support/process.hpp"
#include "support/slave_process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr std::uint64_t kIterations = 200;  // three times the namespace's 64 ephemeral ports

std::uint64_t u(const json& j, const char* key) { return j.value(key, std::uint64_t{0}); }

class Canfail : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = netns_unavailable(); !why.empty()) GTEST_SKIP() << why;
    if (auto e = namespaces_.create({{"-n", ns(), "link", "set", "lo", "up"}}); !e.empty()) {
      GTEST_SKIP() << e;
    }
    Process set(netns_exec(
        ns(), {"/bin/sh", "-c", "echo '40000 40063' > /proc/sys/net/ipv4/ip_local_port_range"}));
    ASSERT_EQ(set.wait(20s).exit_code, 0);
    slave_.emplace(netns_exec(ns(), serve_command("127.0.0.1:20000", {"-q"})), "127.0.0.1", 20000,
                   ns());
  }

  const std::string& ns() const { return namespaces_[0]; }

  /// Runs a one-strand profile of two steps: `open` (a connect or an accept, `options` added)
  /// `kIterations` times, then as many disconnects (`close_options` added); `extra` arguments.
  ProcessResult run(const std::string& open, const std::string& options,
                    const std::string& close_options, const std::vector<std::string>& extra = {}) {
    return run_profile(fmt::format(R"(<transaction iterations="{0}">
      <flowop type="{1}" options="remotehost=$h protocol=tcp {2}"/>
    </transaction>
    <transaction iterations="{0}">
      <flowop type="disconnect" options="{3}"/>
    </transaction>)",
                                   kIterations, open, options, close_options),
                       extra);
  }

  /// Runs a one-strand profile of `transactions` with the master in the namespace.
  ProcessResult run_profile(const std::string& transactions,
                            const std::vector<std::string>& extra = {}) {
    const fs::path profile = dir_.path() / "canfail.xml";
    std::ofstream(profile) << R"(<?xml version="1.0"?>
<profile name="out of ports">
  <group nthreads="1">
    )" << transactions << R"(
  </group>
</profile>
)";
    std::vector<std::string> command{VOLLEY_BINARY, "run",    profile.string(),
                                     "-P",          "20000",  "--set",
                                     "h=127.0.0.1", "--json", json_path().string()};
    command.insert(command.end(), extra.begin(), extra.end());
    Process master(netns_exec(ns(), command));
    ProcessResult r = master.wait(60s);
    EXPECT_FALSE(r.timed_out) << "the run hung:\n" << r.out << r.err << slave_->log();
    doc_ = json::parse(std::ifstream(json_path()), nullptr, false);
    EXPECT_FALSE(doc_.is_discarded()) << r.out << r.err;
    return r;
  }

  /// Flowop 0 of step `step` of the master (`side` = doc) or of its slave.
  const json& flowop(const json& side, std::size_t step) const {
    return side.at("groups")[0].at("transactions")[step].at("flowops")[0];
  }
  const json& slave() const { return doc_.at("slaves")[0]; }

  fs::path json_path() const { return dir_.path() / "result.json"; }

  Namespaces namespaces_{{"volley-canfail"}};
  TempDir dir_;
  std::optional<SlaveProcess> slave_;
  json doc_;
};

TEST_F(Canfail, ConnectsOutOfPortsEndOkOnlyWithEveryFailureCountedAndSaid) {
  const ProcessResult r = run("connect", "canfail", "canfail");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_EQ(doc_.at("status"), "ok") << doc_.at("failure");
  const json& connect = flowop(doc_, 0);
  const std::uint64_t opened = u(connect, "ops");
  const std::uint64_t no_port = u(connect.at("errors"), "addr_unavailable");
  // Some connects found a port, the rest did not, and each is one or the other.
  EXPECT_GT(opened, 0U);
  EXPECT_GT(no_port, 0U) << "the namespace's port range did not run out: the test proved nothing";
  EXPECT_EQ(opened + no_port, kIterations) << connect.dump();
  EXPECT_EQ(u(connect.at("errors"), "total"), no_port) << connect.dump();
  // The slave's mirror took exactly the connections that were opened, and ended its accepts
  // there (its step ended by the master's count, not by a wait for connections never coming).
  const json& accept = flowop(slave(), 0);
  EXPECT_EQ(u(accept, "ops"), opened) << accept.dump();
  EXPECT_EQ(u(accept.at("errors"), "total"), 0U) << accept.dump();
  // Each disconnect of a connection never opened failed as not_connected, on both sides alike.
  for (const json* side : {static_cast<const json*>(&doc_), &slave()}) {
    const json& disconnect = flowop(*side, 1);
    EXPECT_EQ(u(disconnect, "ops"), opened) << disconnect.dump();
    EXPECT_EQ(u(disconnect.at("errors"), "not_connected"), kIterations - opened)
        << disconnect.dump();
  }
  // Operations agree: failed ones are errors, not operations, on both sides.
  EXPECT_EQ(doc_.at("comparison")[0].at("master_ops"), 2 * opened);
  EXPECT_EQ(doc_.at("comparison")[0].at("slave_ops"), 2 * opened);
  EXPECT_EQ(doc_.at("totals").at("errors").at("addr_unavailable"), no_port);
  EXPECT_EQ(doc_.at("totals").at("errors").at("unreachable"), 0U);
  // And the report says it where the status is, by side and kind.
  const std::string expected_header =
      "  failed operations, allowed by canfail (all steps): master:";
  EXPECT_NE(r.out.find(expected_header), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("addr_unavailable " + std::to_string(no_port)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("slave 127.0.0.1: not_connected " + std::to_string(kIterations - opened)),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(Errors: failed operations, not counted in Operations"), std::string::npos)
      << r.out;
}

TEST_F(Canfail, WritesOnAConnectionNeverOpenedAreCountedAlikeOnBothSides) {
  // One step: connect, write, disconnect, each with canfail. The master closes first, so each
  // closed connection holds its port in TIME_WAIT (not reused: tcp_tw_reuse 0), and its connects
  // run out; the flowops after each failed connect find no connection (not_connected) and move
  // nothing. The slave's mirror takes the connections made, and its step ends on the master's
  // count of them.
  Process no_reuse(netns_exec(ns(), {"/bin/sh", "-c", "echo 0 > /proc/sys/net/ipv4/tcp_tw_reuse"}));
  ASSERT_EQ(no_reuse.wait(20s).exit_code, 0);
  const ProcessResult r = run_profile(R"(<transaction iterations="200">
      <flowop type="connect" options="remotehost=$h protocol=tcp canfail"/>
      <flowop type="write" options="size=100 canfail"/>
      <flowop type="disconnect" options="canfail"/>
    </transaction>)");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json& master_ops = doc_.at("groups")[0].at("transactions")[0].at("flowops");
  const json& slave_ops = slave().at("groups")[0].at("transactions")[0].at("flowops");
  const std::uint64_t opened = u(master_ops[0], "ops");
  const std::uint64_t no_port = u(master_ops[0].at("errors"), "addr_unavailable");
  EXPECT_GT(no_port, 0U);
  EXPECT_EQ(opened + no_port, kIterations);
  for (std::size_t f = 1; f < 3; ++f) {
    EXPECT_EQ(u(master_ops[f], "ops"), opened) << master_ops[f].dump();
    EXPECT_EQ(u(master_ops[f].at("errors"), "not_connected"), no_port) << master_ops[f].dump();
    EXPECT_EQ(u(slave_ops[f], "ops"), opened) << slave_ops[f].dump();
  }
  // Every byte the master wrote the slave read: failures that found no connection moved none,
  // and do not excuse the byte rule.
  EXPECT_EQ(u(master_ops[1], "bytes_written"), 100 * opened);
  EXPECT_EQ(u(slave_ops[1], "bytes_read"), 100 * opened);
}

TEST_F(Canfail, UperfsLayoutKeepsItsTableAndSaysTheAllowedFailuresOnStderr) {
  const ProcessResult r = run("connect", "canfail", "canfail", {"--uperf-output", "Ra"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::uint64_t no_port = u(flowop(doc_, 0).at("errors"), "addr_unavailable");
  EXPECT_GT(no_port, 0U);
  EXPECT_NE(r.out.find("Run Statistics"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("volley: failed operations, allowed by canfail (all steps): master: "
                       "not_connected " +
                       std::to_string(no_port) + ", addr_unavailable " + std::to_string(no_port)),
            std::string::npos)
      << r.err;
}

TEST_F(Canfail, ADisconnectWithoutCanfailOfAConnectionNeverOpenedFailsTheRunSayingWhy) {
  // uperf's tests/canfail.xml: canfail on the connect only.
  const ProcessResult r = run("connect", "canfail", "");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(doc_.at("status"), "failed");
  const std::string failure = doc_.at("failure");
  EXPECT_NE(failure.find("strand(s) of the master stopped on an error of a flowop without canfail, "
                         "first group0/txn2/disconnect (strand 0): disconnect: connection "
                         "(anonymous) is not open ("),
            std::string::npos)
      << failure;
  EXPECT_NE(failure.find("operations of this strand failed or were cut earlier, allowed by canfail "
                         "or by the end of its step)"),
            std::string::npos)
      << failure;
  EXPECT_NE(r.out.find("  failed operations (all steps): master: not_connected 1, "
                       "addr_unavailable "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(stopped its strand)"), std::string::npos) << r.out;
}

TEST_F(Canfail, WithoutCanfailAConnectOutOfPortsFailsTheRunSayingWhy) {
  const ProcessResult r = run("connect", "", "");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string failure = doc_.at("failure");
  EXPECT_NE(
      failure.find("first group0/txn1/connect (strand 0): connect to 127.0.0.1: Cannot assign "
                   "requested address"),
      std::string::npos)
      << failure;
  EXPECT_EQ(u(flowop(doc_, 0).at("errors"), "addr_unavailable"), 1U);
}

TEST_F(Canfail, AnAcceptWhosePeerRanOutOfPortsDoesNotWaitForIt) {
  // The master accepts; the slave's mirror connects, in the same namespace, so its connects run
  // out of ports. The master's accept step must end on the slave's count of what it connected.
  const ProcessResult r = run("accept", "canfail", "canfail");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json& connect = flowop(slave(), 0);
  const std::uint64_t opened = u(connect, "ops");
  const std::uint64_t no_port = u(connect.at("errors"), "addr_unavailable");
  EXPECT_GT(no_port, 0U) << connect.dump();
  EXPECT_EQ(opened + no_port, kIterations) << connect.dump();
  EXPECT_EQ(u(flowop(doc_, 0), "ops"), opened);
  EXPECT_EQ(u(flowop(doc_, 0).at("errors"), "total"), 0U);
  const std::string failed = "slave 127.0.0.1: not_connected " + std::to_string(no_port) +
                             ", addr_unavailable " + std::to_string(no_port);
  EXPECT_NE(r.out.find(failed), std::string::npos) << r.out;
  // The master's disconnects of the connections never made say why the pool was short.
  EXPECT_NE(r.out.find("is not open (1 connect or accept operation of this strand failed or was "
                       "cut earlier"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace volley::test
