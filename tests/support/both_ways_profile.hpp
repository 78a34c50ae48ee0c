#pragma once
// A profile that uses both directions of data connection: group "out" (2 strands) connects to
// `host` and group "in" (3 strands, conn=2) accepts from it, a ping-pong each for `duration`.
// Shared by the IPv6 tests on loopback and in network namespaces. Every size is at least 28
// bytes, a UDP datagram's header: a smaller read would make the slave's mirror write datagrams
// it cannot send, which stops its strands (and fails the run).
#include <string>

namespace volley::test {

/// `host` as written in remotehost= ("::1", "$h", "[2001:db8::2]"); `protocol` tcp or udp.
std::string both_ways_profile(const std::string& host, const std::string& protocol,
                              const std::string& duration);

}  // namespace volley::test
