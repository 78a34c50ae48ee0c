// Writes with zerocopy when the socket's option memory fills: in a network namespace of the test's
// own whose net.core.optmem_max is 4 KiB (per namespace since Linux 6.9), a few completions not
// yet read are enough for the kernel to refuse a zero-copy send (ENOBUFS) until they are: about
// 45 refusals in a second of this profile under strace. The run still moves every byte, and every
// send's completion is read and counted. Needs root and `ip`: skipped with a message otherwise.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/netns.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* kZeroCopyBulk = R"(<?xml version="1.0"?>
<profile name="zerocopy">
  <group nthreads="1">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=tcp"/></transaction>
    <transaction duration="1s"><flowop type="write" options="size=64k zerocopy"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)";

TEST(ZeroCopyOptmem, SendsRefusedForUnreadCompletionsGoOnOnceTheyAreRead) {
  if (auto why = netns_unavailable(); !why.empty()) GTEST_SKIP() << why;
  Namespaces namespaces({"volley-optmem"});
  const std::string& ns = namespaces[0];
  if (auto e = namespaces.create({{"-n", ns, "link", "set", "lo", "up"}}); !e.empty()) {
    GTEST_SKIP() << e;
  }
  Process set(netns_exec(ns, {"sysctl", "-qw", "net.core.optmem_max=4096"}));
  ASSERT_EQ(set.wait(20s).exit_code, 0) << "net.core.optmem_max is per namespace from Linux 6.9";
  TempDir dir;
  const fs::path profile = dir.path() / "zerocopy.xml";
  std::ofstream(profile) << kZeroCopyBulk;
  const fs::path out = dir.path() / "r.json";
  Process run(netns_exec(
      ns, {VOLLEY_BINARY, "run", profile.string(), "--local", "--json", out.string(), "-q"}));
  const ProcessResult r = run.wait(60s);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json doc = json::parse(std::ifstream(out));
  EXPECT_EQ(doc.at("status"), "ok");
  EXPECT_EQ(doc.at("comparison")[0].at("master_bytes"), doc.at("comparison")[0].at("slave_bytes"));
  const json& write = doc.at("groups")[0].at("transactions")[1].at("flowops")[0];
  EXPECT_EQ(write.at("errors").at("total"), 0);
  const json& zc = write.at("zerocopy");
  const auto sends = zc.at("sends").get<std::uint64_t>();
  EXPECT_GE(sends, write.at("ops").get<std::uint64_t>());
  EXPECT_GT(sends, 100U);
  EXPECT_EQ(zc.at("copied").get<std::uint64_t>(), sends);
  EXPECT_EQ(zc.at("unconfirmed"), 0);
}

}  // namespace
}  // namespace volley::test
