#pragma once
// Hosts and host:port pairs as people write them, IPv4 and IPv6 alike: `10.0.0.2`, `slave-a`,
// `::1`, `[::1]`, `[2001:db8::2]:20000`, `fe80::1%eth0`. One parser for every place an address is
// read (a profile's remotehost, `serve --listen`), one printer for every place one is written.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace volley::core {

/// A parsed host, with the port when one was written after it.
struct HostPort {
  std::string host;  ///< brackets removed: "::1", "fe80::1%eth0", "10.0.0.2", "slave-a"
  std::optional<std::uint16_t> port;
  std::string error;  ///< why the text is not a host (then host and port mean nothing)
};

/// Parses `host`, `host:PORT`, `IPV6`, `[IPV6]` or `[IPV6]:PORT`. A bare IPv6 address never
/// takes a port (its last group would be ambiguous): bracket it for one. An IPv6 address may carry
/// a zone after '%' (its interface: `fe80::1%eth0`); the zone is checked for form only, since the
/// host that uses the address may not be the one that parses it. The error says what is wrong
/// with the text, without naming the option (the caller knows it).
HostPort parse_host_port(std::string_view text);

/// Whether `host` (unbracketed) is an IPv6 address, with or without a zone.
bool is_ipv6_literal(std::string_view host);

/// "host:port", with the host in brackets when it is an IPv6 address ("[::1]:20000").
std::string format_host_port(std::string_view host, std::uint16_t port);

}  // namespace volley::core
