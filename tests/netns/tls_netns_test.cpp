// TLS between two hosts: the master and a slave each in a network namespace of its own, joined by
// a veth pair (198.18.26.1 ── veth ── 198.18.26.2), the slave a keyed `volley serve` with its own
// certificate made per run. Each run moves large messages both ways (not a whole number of
// records, and more than a receive buffer holds), under TLS 1.3 and under TLS 1.2 with a CBC suite
// (the largest expansion a record can have): every read must end with all its bytes, so the counts
// are exact and agree on both sides, and every strand made one full handshake. Needs root
// (CAP_NET_ADMIN) and `ip`: skipped with a message otherwise.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

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

constexpr const char* kTlsSlave = "198.18.26.2";
constexpr std::uint16_t kTlsControlPort = 20000;
constexpr std::uint64_t kTlsIterations = 12;

std::uint64_t tls_netns_u64(const json& j, const char* key) {
  return j.at(key).get<std::uint64_t>();
}

class TlsNetns : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = netns_unavailable(); !why.empty()) GTEST_SKIP() << why;
    if (auto problem = namespaces_.create(
            veth_pair(master(), slave_ns(), "198.18.26.1/24", std::string(kTlsSlave) + "/24"));
        !problem.empty()) {
      GTEST_SKIP() << "cannot build the link: " << problem;
    }
    key_ = dir_.write("key", std::string(64, 't') + "\n");
    fs::permissions(key_, fs::perms::owner_read | fs::perms::owner_write);
    slave_ = std::make_unique<SlaveProcess>(
        netns_exec(slave_ns(), serve_command(std::to_string(kTlsControlPort),
                                             {"--workers", "1", "--key-file", key_.string()})),
        kTlsSlave, kTlsControlPort, master());
    ASSERT_TRUE(reachable_from(master(), kTlsSlave, kTlsControlPort)) << slave_->log();
  }

  void TearDown() override {
    if (slave_) {
      EXPECT_FALSE(slave_->stop().timed_out) << "the slave ignored SIGTERM";
    }
  }

  const std::string& master() const { return namespaces_[0]; }
  const std::string& slave_ns() const { return namespaces_[1]; }

  /// Two strands, each a TLS connect with `tls`, then kTlsIterations of: a `size`-byte write and
  /// a `size`-byte read (the slave's mirror reads, then writes), each read bounded by 20 s.
  json run(const std::string& tls, const std::string& size) {
    const fs::path profile = dir_.write("tls.xml", fmt::format(R"(<?xml version="1.0"?>
<profile name="tls both ways">
  <group nthreads="2">
    <transaction iterations="1">
      <flowop type="connect" options="remotehost=$h protocol=tls {0}"/>
    </transaction>
    <transaction iterations="{1}">
      <flowop type="write" options="size={2}"/>
      <flowop type="read" options="size={2} timeout=20s"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)",
                                                               tls, kTlsIterations, size));
    const fs::path out = dir_.path() / "result.json";
    Process m(netns_exec(
        master(), {VOLLEY_BINARY, "run", profile.string(), "-P", std::to_string(kTlsControlPort),
                   "--set", std::string("h=") + kTlsSlave, "--key-file", key_.string(), "-q",
                   "--json", out.string()}));
    const ProcessResult r = m.wait(120s);
    EXPECT_FALSE(r.timed_out) << "the run hung:\n" << r.out << r.err << slave_->log();
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err << slave_->log();
    std::ifstream in(out);
    return json::parse(in, nullptr, false);
  }

  Namespaces namespaces_{{"volley-tls-m", "volley-tls-s"}};
  TempDir dir_;
  fs::path key_;
  std::unique_ptr<SlaveProcess> slave_;
};

/// Both sides moved exactly kTlsIterations messages of `bytes` each way, per strand.
void expect_exact(const json& doc, std::uint64_t bytes, const std::string& what) {
  ASSERT_FALSE(doc.is_discarded()) << what;
  EXPECT_EQ(doc.at("status"), "ok") << what << doc.dump(1);
  const std::uint64_t want = 2 * kTlsIterations * bytes;  // two strands
  const json& mine = doc.at("groups")[0].at("transactions")[1].at("flowops");
  const json& theirs = doc.at("slaves")[0].at("groups")[0].at("transactions")[1].at("flowops");
  EXPECT_EQ(tls_netns_u64(mine[0], "bytes_written"), want) << what;
  EXPECT_EQ(tls_netns_u64(mine[1], "bytes_read"), want) << what;
  EXPECT_EQ(tls_netns_u64(theirs[0], "bytes_read"), want) << what;
  EXPECT_EQ(tls_netns_u64(theirs[1], "bytes_written"), want) << what;
  const json& h = doc.at("groups")[0].at("transactions")[0].at("flowops")[0].at("handshakes");
  EXPECT_EQ(tls_netns_u64(h.at("full"), "ops"), 2U) << what;
}

TEST_F(TlsNetns, LargeMessagesBothWaysArriveWholeUnderEitherVersion) {
  for (const std::string& tls : {std::string("tls_version=1.3"),
                                 std::string("tls_version=1.2 cipher=ECDHE-ECDSA-AES128-SHA")}) {
    // Below the largest mark, above it, and not a whole number of records.
    for (const std::string size : {"100000", "3m"}) {
      const std::string what = tls + ", " + size + " bytes";
      expect_exact(run(tls, size), size == "3m" ? 3U << 20U : 100000U, what);
    }
  }
}

}  // namespace
}  // namespace volley::test
