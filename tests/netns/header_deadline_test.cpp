// A data connection the slave closes at its header deadline (volley serve --header-timeout): the
// master says so in a sentence that names the connection, the deadline and the slave's log, counts
// it as the slave refusing the connection, and exits 1; never a bare errno ("Broken pipe") or end
// of file. Inside a network namespace of its own, nftables drops every TCP segment with data
// (PSH set) on the data connections (any port but the control port), so the connection header
// does not reach the slave in time, as when a loaded master writes it after the deadline. Needs
// root, `ip` and `nft`: skipped with a message otherwise.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
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
using namespace std::chrono_literals;

/// A namespace whose data connections carry no data, a slave in it with a 100 ms header
/// deadline, and a master running `txns` against it. The connect is in the same step as the
/// operations that find the connection closed: at the end of a step the slave checks that every
/// connection the master made reached it (AcceptCount.*), and fails the run there, so a
/// connection made in an earlier step would never be used.
class HeaderDeadline : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!netns_unavailable().empty() || nft_binary().empty()) {
      GTEST_SKIP() << "needs root, ip and nft (nftables) to hold back a connection header";
    }
    if (auto e = namespaces_.create({{"-n", ns(), "link", "set", "lo", "up"}}); !e.empty()) {
      GTEST_SKIP() << e;
    }
    ASSERT_EQ(nft({"add", "table", "inet", "t"}), "");
    ASSERT_EQ(nft({"add chain inet t out { type filter hook output priority 0; }"}), "");
    // The control connection passes; every other segment with data is dropped.
    for (const char* rule :
         {"tcp dport 20000 accept", "tcp sport 20000 accept", "tcp flags & psh == psh drop"}) {
      ASSERT_EQ(nft({fmt::format("add rule inet t out {}", rule)}), "");
    }
  }

  const std::string& ns() const { return namespaces_[0]; }
  std::string nft(const std::vector<std::string>& args) { return nft_in(ns(), args); }

  void start(const std::string& txns) {
    const fs::path profile = dir_.path() / "profile.xml";
    std::ofstream(profile) << R"(<?xml version="1.0"?>
<profile name="held header">
  <group nthreads="1">
)" << txns << R"(
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)";
    slave_.emplace(
        netns_exec(ns(), serve_command("127.0.0.1:20000", {"--header-timeout", "100ms"})),
        "127.0.0.1", 20000, ns());
    master_.emplace(netns_exec(ns(), {VOLLEY_BINARY, "run", profile.string(), "-P", "20000",
                                      "--set", "h=127.0.0.1", "--json", json_path().string()}));
  }

  /// Waits until the slave has closed the connection at its header deadline.
  bool wait_for_the_slave_to_close() {
    for (int i = 0; i < 200; ++i) {
      if (slave_->log().find("no header within 100 ms") != std::string::npos) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  /// The master's run: exit 1, the sentence, and one error counted as refused in step 0.
  void expect_refused_and_said() {
    const ProcessResult r = master_->wait(60s);
    const ProcessResult s = slave_->stop();
    const std::string said = r.out + r.err;  // the first errors are in the report
    EXPECT_EQ(r.exit_code, 1) << said;
    EXPECT_NE(s.err.find("no header within 100 ms"), std::string::npos) << s.err;
    // What happened and where to look, not the system call's errno or a bare end of file.
    EXPECT_NE(said.find("the slave closed data connection (anonymous) before any data passed on "
                        "it"),
              std::string::npos)
        << said;
    EXPECT_NE(said.find("--header-timeout"), std::string::npos) << said;
    EXPECT_NE(said.find("the slave's log"), std::string::npos) << said;
    EXPECT_EQ(said.find("Broken pipe"), std::string::npos) << said;
    EXPECT_EQ(said.find("Connection reset"), std::string::npos) << said;
    EXPECT_EQ(said.find("bytes still to come"), std::string::npos) << said;

    const auto doc = nlohmann::json::parse(std::ifstream(json_path()));
    const auto& txn = doc.at("groups")[0].at("transactions")[0];
    std::uint64_t refused = 0;
    std::uint64_t total = 0;
    for (const auto& flowop : txn.at("flowops")) {
      refused += flowop.at("errors").value("refused", std::uint64_t{0});
      total += flowop.at("errors").at("total").get<std::uint64_t>();
    }
    EXPECT_EQ(refused, 1U) << txn.dump();
    EXPECT_EQ(total, 1U) << txn.dump();
  }

  fs::path json_path() const { return dir_.path() / "result.json"; }

  Namespaces namespaces_{{"volley-hdr"}};
  TempDir dir_;
  std::optional<SlaveProcess> slave_;
  std::optional<Process> master_;
};

TEST_F(HeaderDeadline, AReadOnAConnectionClosedAtItsHeaderIsASentenceNotAnEndOfFile) {
  // The slave's FIN arrives; the master's read sees the end of the stream.
  start(R"(<transaction iterations="1">
      <flowop type="connect" options="remotehost=$h protocol=tcp"/>
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>)");
  expect_refused_and_said();
}

// A connection made in a step of its own and closed at its header is never used: the slave's
// check at the end of that step (the master's count of connections against what reached the
// listeners, AcceptCount.*) fails the run there, naming the late header, before any write could
// meet the reset and say "Broken pipe".
TEST_F(HeaderDeadline, AConnectionClosedAtItsHeaderInAStepOfItsOwnFailsThatStepSayingWhy) {
  start(R"(<transaction iterations="1">
      <flowop type="connect" options="remotehost=$h protocol=tcp"/>
    </transaction>
    <transaction duration="20s">
      <flowop type="write" options="size=64"/>
      <flowop type="think" options="duration=10ms"/>
    </transaction>)");
  ASSERT_TRUE(wait_for_the_slave_to_close()) << slave_->log() << master_->stderr_so_far();
  ASSERT_EQ(nft({"flush", "chain", "inet", "t", "out"}), "");
  const ProcessResult r = master_->wait(60s);
  const ProcessResult s = slave_->stop();
  const std::string said = r.out + r.err;
  EXPECT_EQ(r.exit_code, 1) << said;
  EXPECT_NE(s.err.find("no header within 100 ms"), std::string::npos) << s.err;
  EXPECT_NE(said.find("step 0: the master established 1 TCP data connection"), std::string::npos)
      << said << "\nthe slave's log:\n"
      << s.err;
  EXPECT_NE(said.find("the slave closed them for a late or wrong header"), std::string::npos)
      << said;
  EXPECT_EQ(said.find("Broken pipe"), std::string::npos) << said;
}

}  // namespace
}  // namespace volley::test
