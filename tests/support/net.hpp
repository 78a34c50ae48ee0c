#pragma once
// Loopback helpers for tests that start their own `volley serve`.
#include <cstdint>
#include <string>

namespace volley::test {

/// A TCP port free on every IPv4 address now, below the kernel's ephemeral range (so no
/// connection takes it as its source port before the caller's process binds it), at random.
std::uint16_t free_port();

/// Whether something accepts TCP connections on address:port now (IPv4, or IPv6 such as "::1").
bool accepts_connections(const std::string& address, std::uint16_t port);

/// Whether this host has an IPv6 loopback address (::1) one can bind.
bool ipv6_loopback_available();

}  // namespace volley::test
