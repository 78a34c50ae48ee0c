#pragma once
// Loopback helpers for tests that start their own `volley serve`.
#include <cstdint>
#include <string>

namespace volley::test {

/// A port that is free on 127.0.0.1 now (bound, read, closed).
std::uint16_t free_port();

/// Whether something accepts TCP connections on address:port now.
bool accepts_connections(const std::string& address, std::uint16_t port);

}  // namespace volley::test
