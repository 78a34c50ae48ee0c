// gso on a path whose MTU cannot carry one datagram with its IP and UDP headers: inside a network
// namespace whose loopback has an MTU of 1,500 bytes, a gso stream of 1,473-byte datagrams (1,501
// with the headers) is refused by the kernel, and the run fails saying why; 1,472-byte datagrams
// fit and go. Needs root and `ip`: skipped with a message otherwise.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/netns.hpp"
#include "support/process.hpp"
#include "support/slave_process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string gso_stream(int size) {
  return R"(<?xml version="1.0"?>
<profile name="gso mtu">
  <group nthreads="1">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=udp gso"/></transaction>
    <transaction iterations="200"><flowop type="write" options="size=)" +
         std::to_string(size) + R"("/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)";
}

TEST(UdpGsoMtu, ADatagramThePathCannotCarryFailsTheRunSayingWhy) {
  if (!netns_unavailable().empty()) GTEST_SKIP() << "needs root and ip: " << netns_unavailable();
  Namespaces namespaces({"volley-gsomtu"});
  const std::string& ns = namespaces[0];
  if (auto e = namespaces.create(
          {{"-n", ns, "link", "set", "lo", "mtu", "1500"}, {"-n", ns, "link", "set", "lo", "up"}});
      !e.empty()) {
    GTEST_SKIP() << e;
  }
  TempDir dir;
  SlaveProcess slave(netns_exec(ns, {VOLLEY_BINARY, "serve", "--listen", "127.0.0.1:20000", "-q"}),
                     "127.0.0.1", 20000, ns);
  const auto run = [&](int size) {
    const fs::path profile = dir.path() / ("gso" + std::to_string(size) + ".xml");
    std::ofstream(profile) << gso_stream(size);
    Process master(netns_exec(
        ns, {VOLLEY_BINARY, "run", profile.string(), "-P", "20000", "--set", "h=127.0.0.1", "-q"}));
    return master.wait(60s);
  };
  const ProcessResult fits = run(1472);
  EXPECT_EQ(fits.exit_code, 0) << fits.out << fits.err;
  const ProcessResult refused = run(1473);
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_NE((refused.out + refused.err).find("must fit the path's MTU"), std::string::npos)
      << refused.out << refused.err;
  slave.stop();
}

}  // namespace
}  // namespace volley::test
