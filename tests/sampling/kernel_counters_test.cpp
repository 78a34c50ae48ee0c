#include "volley/sampling/kernel_counters.hpp"

#include <gtest/gtest.h>

#include <string>

#include "support/temp_dir.hpp"

namespace volley::sampling {
namespace {

// /proc/net/snmp of a 6.x kernel (the Ip, Icmp and IcmpMsg groups left out).
constexpr const char* kSnmp =
    "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets "
    "CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n"
    "Tcp: 1 200 120000 -1 6402868 6397024 3510 318720 0 1131874005 1132138803 118223 0 392316 0\n"
    "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors "
    "IgnoredMulti MemErrors\n"
    "Udp: 43532430 5 7205115 50964198 7205115 0 0 0 0\n"
    "UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors "
    "IgnoredMulti MemErrors\n"
    "UdpLite: 0 0 0 0 0 0 0 0 0\n";

// /proc/net/netstat of an older kernel, cut to fewer columns: it has no TCPRcvQDrop nor
// TCPZeroWindowDrop.
constexpr const char* kOldNetstat =
    "TcpExt: SyncookiesSent SyncookiesRecv ListenOverflows ListenDrops TCPLostRetransmit "
    "TCPTimeouts TCPBacklogDrop TCPOFOQueue\n"
    "TcpExt: 0 0 2816 2816 1663 4981 3 127773\n"
    "IpExt: InNoRoutes InTruncatedPkts InMcastPkts\n"
    "IpExt: 0 0 12\n";

// /proc/net/softnet_stat of a 6.x kernel (15 columns; column 13 is the CPU) with CPU 1 offline.
constexpr const char* kSoftnet =
    "1c898d3b 00000022 00000039 00000000 00000000 00000000 00000000 00000000 00000000 00000000 "
    "00000000 00000000 00000000 00000000 00000000\n"
    "1c14c7c4 00000042 00000036 00000000 00000000 00000000 00000000 00000000 00000000 00000000 "
    "00000000 00000000 00000002 00000000 00000000\n";

TEST(ParseSnmpPairs, ReadsEveryGroupByName) {
  const auto parsed = parse_snmp_pairs(kSnmp);
  const auto* m = std::get_if<ProtocolCounterMap>(&parsed);
  ASSERT_NE(m, nullptr) << std::get<std::string>(parsed);
  EXPECT_EQ(m->at("Tcp.RetransSegs"), 118223u);
  EXPECT_EQ(m->at("Tcp.InSegs"), 1131874005u);
  EXPECT_EQ(m->at("Udp.RcvbufErrors"), 7205115u);
  EXPECT_EQ(m->at("Udp.NoPorts"), 5u);
  EXPECT_EQ(m->at("UdpLite.NoPorts"), 0u);
  EXPECT_FALSE(m->contains("Tcp.MaxConn"));  // -1: a setting, not a counter
}

TEST(ParseSnmpPairs, ACounterThisKernelLacksIsAbsentNotZero) {
  const auto parsed = parse_snmp_pairs(kOldNetstat);
  const auto* m = std::get_if<ProtocolCounterMap>(&parsed);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->at("TcpExt.ListenOverflows"), 2816u);
  EXPECT_EQ(m->at("TcpExt.TCPOFOQueue"), 127773u);
  EXPECT_EQ(m->at("IpExt.InMcastPkts"), 12u);
  EXPECT_FALSE(m->contains("TcpExt.TCPZeroWindowDrop"));
  EXPECT_FALSE(m->contains("TcpExt.TCPRcvQDrop"));
}

TEST(ParseSnmpPairs, MalformedTextIsAnErrorValue) {
  const auto error = [](std::string_view text) {
    const auto parsed = parse_snmp_pairs(text);
    return std::holds_alternative<std::string>(parsed) ? std::get<std::string>(parsed) : "";
  };
  EXPECT_EQ(error("Tcp: A B\nTcp: 1\n"), "line 2: the number of values differs from the header's");
  EXPECT_EQ(error("Tcp: A B\nTcp: 1 x\n"), "line 2: 'x' is not an integer");
  EXPECT_EQ(error("Tcp: A B\nUdp: 1 2\n"), "line 2: not the values of Tcp");
  EXPECT_EQ(error("Tcp: A B\n"), "line 1: a header without values");
  EXPECT_EQ(error("Tcp A B\nTcp A B\n"), "line 1: no \"Group:\" label");
  EXPECT_EQ(error("Tcp: A\nTcp: 99999999999999999999999\n"),
            "line 2: '99999999999999999999999' is not an integer");
  EXPECT_EQ(error(std::string(kSnmp) + "Udp: InDatagrams\n"), "line 7: a header without values");
  // Blank lines are not pairs; an empty file has no counters, which is not an error.
  EXPECT_EQ(error("\nTcp: A\n\nTcp: 1\n\n"), "");
  EXPECT_EQ(error(""), "");
}

TEST(ParseSoftnetStat, HexColumnsAndTheCpuColumn) {
  const auto parsed = parse_softnet_stat(kSoftnet);
  const auto* cpus = std::get_if<std::vector<SoftnetCpu>>(&parsed);
  ASSERT_NE(cpus, nullptr) << std::get<std::string>(parsed);
  ASSERT_EQ(cpus->size(), 2u);
  EXPECT_EQ((*cpus)[0], (SoftnetCpu{0, 0x1c898d3b, 0x22, 0x39}));
  EXPECT_EQ((*cpus)[1], (SoftnetCpu{2, 0x1c14c7c4, 0x42, 0x36}));
}

TEST(ParseSoftnetStat, OldKernelsNumberCpusByLine) {
  const auto parsed = parse_softnet_stat(
      "0000000a 00000001 00000002 00000000 00000000 00000000 00000000 00000000 00000000 00000000 "
      "00000000\n"
      "0000000b 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 "
      "00000000\n");
  const auto& cpus = std::get<std::vector<SoftnetCpu>>(parsed);
  ASSERT_EQ(cpus.size(), 2u);
  EXPECT_EQ(cpus[1], (SoftnetCpu{1, 11, 0, 0}));
}

TEST(ParseSoftnetStat, MalformedTextIsAnErrorValue) {
  EXPECT_EQ(std::get<std::string>(parse_softnet_stat("0000000a 00000001\n")),
            "line 1: fewer than three columns");
  EXPECT_EQ(std::get<std::string>(parse_softnet_stat("0000000a 00000001 zz\n")),
            "line 1: 'zz' is not hexadecimal");
  EXPECT_EQ(std::get<std::string>(parse_softnet_stat("1ffffffff 0 0\n")),
            "line 1: '1ffffffff' is not hexadecimal");
  EXPECT_EQ(std::get<std::string>(parse_softnet_stat("\n")), "no CPU line");
}

TEST(SampleKernelCounters, FakeRoot) {
  test::TempDir root;
  root.write("proc/net/snmp", kSnmp);
  root.write("proc/net/netstat", kOldNetstat);
  root.write("proc/net/softnet_stat", kSoftnet);
  const KernelSample s = sample_kernel_counters(root.path());
  EXPECT_TRUE(s.problems.empty());
  EXPECT_EQ(s.protocol.at("Tcp.RetransSegs"), 118223u);
  EXPECT_EQ(s.protocol.at("TcpExt.ListenDrops"), 2816u);
  ASSERT_TRUE(s.softnet.has_value());
  EXPECT_EQ(s.softnet->size(), 2u);
}

TEST(SampleKernelCounters, MissingAndMalformedFilesAreProblemsNotZeros) {
  test::TempDir root;
  root.write("proc/net/snmp", kSnmp);
  root.write("proc/net/netstat", "TcpExt: ListenOverflows\nTcpExt: lots\n");
  const KernelSample s = sample_kernel_counters(root.path());
  EXPECT_EQ(s.protocol.at("Udp.InErrors"), 7205115u);
  EXPECT_FALSE(s.protocol.contains("TcpExt.ListenOverflows"));
  EXPECT_FALSE(s.softnet.has_value());
  EXPECT_EQ(s.problems,
            (std::vector<std::string>{"proc/net/netstat: line 2: 'lots' is not an integer",
                                      "proc/net/softnet_stat: unreadable"}));
}

TEST(SampleKernelCounters, RealHostSmoke) {
  const KernelSample s = sample_kernel_counters();
  if (s.problems.empty()) {
    EXPECT_TRUE(s.protocol.contains("Tcp.RetransSegs"));
    EXPECT_TRUE(s.protocol.contains("Udp.RcvbufErrors"));
    ASSERT_TRUE(s.softnet.has_value());
    EXPECT_FALSE(s.softnet->empty());
  }
}

}  // namespace
}  // namespace volley::sampling
