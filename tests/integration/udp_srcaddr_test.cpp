// srcaddr= on a UDP connect, end to end (the real CLI, a real `--local` slave, loopback): each
// strand's socket binds to its source address before the handshake, the slave answers and mirrors
// the flow from that address, and an address that is not this host's fails the run naming it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/local_run.hpp"
#include "support/proc_sockets.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace volley::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

/// `strands` strands, each: a UDP connect with `srcaddr`, a 64-byte ping-pong of `iterations`,
/// a pause that keeps the sockets open long enough to be seen in /proc, and a disconnect.
std::string udp_pingpong(int strands, const std::string& srcaddr, std::uint64_t iterations) {
  return fmt::format(R"XML(<?xml version="1.0"?>
<profile name="udp srcaddr">
  <group nthreads="{}">
    <transaction iterations="1"><flowop type="connect" options="remotehost=$h protocol=udp srcaddr={}"/></transaction>
    <transaction iterations="{}">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
    <transaction iterations="1"><flowop type="think" options="duration=800ms"/></transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML",
                     strands, srcaddr, iterations);
}

TEST(UdpSrcaddr, StrandsBindToTheirAddressesAndTheSlaveMirrorsThem) {
  TempDir dir;
  constexpr int kStrands = 4;
  constexpr std::uint64_t kIterations = 200;
  const auto profile =
      dir.write("p.xml", udp_pingpong(kStrands, "127.0.0.2-127.0.0.3", kIterations));
  const auto out = dir.path() / "r.json";
  Process run({VOLLEY_BINARY, "run", profile.string(), "--local", "--set", "h=127.0.0.1", "--json",
               out.string(), "-q"});
  // While it runs: master sockets bound to 127.0.0.2 and .3, slave sockets connected to them
  // (the slave's data socket of each flow is connected to the address the hello came from).
  SocketAddresses seen;
  const auto give_up = std::chrono::steady_clock::now() + 30s;
  const auto all_seen = [&seen] {
    for (const char* a : {"127.0.0.2", "127.0.0.3"}) {
      if (seen.local.count(a) == 0 || seen.remote.count(a) == 0) return false;
    }
    return true;
  };
  while (!all_seen() && running(run.pid()) && std::chrono::steady_clock::now() < give_up) {
    add_socket_addresses("/proc/net/udp", seen);
    add_socket_addresses("/proc/net/udp6", seen);
    std::this_thread::sleep_for(2ms);
  }
  const ProcessResult r = run.wait(60s);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(all_seen()) << "bound: " << fmt::format("{}", fmt::join(seen.local, " "))
                          << "; connected to: " << fmt::format("{}", fmt::join(seen.remote, " "));

  const json doc = read_json(out);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["status"], "ok") << doc["failure"];
  EXPECT_EQ(doc["totals"]["errors"]["total"].get<std::uint64_t>(), 0U);
  EXPECT_EQ(doc["totals"]["connections_established"].get<std::uint64_t>(), kStrands);
  // Every datagram each way arrived (loopback, one in flight per strand): bytes equal.
  const json& mine = doc.at("groups").at(0).at("transactions").at(1).at("flowops");
  const json& theirs =
      doc.at("slaves").at(0).at("groups").at(0).at("transactions").at(1).at("flowops");
  const std::uint64_t bytes = kStrands * kIterations * 64;
  EXPECT_EQ(mine.at(0).at("bytes_written").get<std::uint64_t>(), bytes);
  EXPECT_EQ(theirs.at(0).at("bytes_read").get<std::uint64_t>(), bytes);
  EXPECT_EQ(theirs.at(0).at("datagrams").at("received").get<std::uint64_t>(),
            kStrands * kIterations);
  EXPECT_EQ(theirs.at(1).at("bytes_written").get<std::uint64_t>(), bytes);
  EXPECT_EQ(mine.at(1).at("bytes_read").get<std::uint64_t>(), bytes);
}

TEST(UdpSrcaddr, AnAddressNotThisHostsFailsTheRunNamingIt) {
  // 198.18.0.0/15 is for benchmarking (RFC 2544): on no interface here. ::1 is this host's, but
  // not of the family the slave is reached by.
  for (const auto& [srcaddr, kind] :
       {std::pair<std::string, std::string>{"198.18.0.1", "addr_unavailable"}, {"::1", "other"}}) {
    SCOPED_TRACE(srcaddr);
    TempDir dir;
    const auto run = run_local(dir, udp_pingpong(2, srcaddr, 10), {"--set", "h=127.0.0.1"}, 60s);
    EXPECT_EQ(run.process.exit_code, 1) << run.process.err << run.process.out;
    const std::string all = run.process.out + run.process.err;
    EXPECT_NE(all.find(fmt::format("bind to srcaddr {} (to reach 127.0.0.1)", srcaddr)),
              std::string::npos)
        << all;
    ASSERT_FALSE(run.doc.is_discarded());
    EXPECT_EQ(run.doc["status"], "failed");
    EXPECT_EQ(run.doc["totals"]["errors"][kind].get<std::uint64_t>(), 2U)
        << run.doc["totals"]["errors"];
  }
}

}  // namespace
}  // namespace volley::test
