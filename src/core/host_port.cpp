#include "volley/core/host_port.hpp"

#include <arpa/inet.h>
#include <net/if.h>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace volley::core {

namespace {

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_';
}

bool is_ipv4_literal(std::string_view host) {
  in_addr out{};
  return ::inet_pton(AF_INET, std::string(host).c_str(), &out) == 1;
}

/// "" when `host` (unbracketed, with any zone) is an IPv6 address, else why not.
std::string ipv6_problem(std::string_view host) {
  std::string_view address = host;
  if (const auto percent = host.find('%'); percent != std::string_view::npos) {
    const std::string_view zone = host.substr(percent + 1);
    if (zone.empty() || !std::all_of(zone.begin(), zone.end(), name_char)) {
      return fmt::format(
          "'{}' has no usable zone after '%' (an interface name or index, as in "
          "fe80::1%eth0)",
          host);
    }
    address = host.substr(0, percent);
  }
  in6_addr out{};
  if (::inet_pton(AF_INET6, std::string(address).c_str(), &out) != 1) {
    return fmt::format("'{}' is not an IPv6 address", address);
  }
  return {};
}

/// "" when `text` is a port number 0..65535 (0: any free port, for a listener), stored in `port`;
/// else why not.
std::string port_problem(std::string_view text, std::optional<std::uint16_t>& port) {
  unsigned long value = 0;
  const bool digits =
      !text.empty() && text.size() <= 5 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) value = std::stoul(std::string(text));
  if (!digits || value > 65535) {
    return fmt::format("'{}' is not a port number (0 to 65535)", text);
  }
  port = static_cast<std::uint16_t>(value);
  return {};
}

}  // namespace

bool is_ipv6_literal(std::string_view host) { return ipv6_problem(host).empty(); }

HostPort parse_host_port(std::string_view text) {
  HostPort out;
  if (text.empty()) {
    out.error = "the host is empty";
    return out;
  }
  if (text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) {
      out.error = fmt::format("'{}' has an unbalanced '['", text);
      return out;
    }
    const std::string_view inside = text.substr(1, close - 1);
    const std::string_view rest = text.substr(close + 1);
    if (auto problem = ipv6_problem(inside); !problem.empty()) {
      out.error = is_ipv4_literal(inside) || (!inside.empty() && inside.find(':') == inside.npos)
                      ? fmt::format("'{}': brackets are for IPv6 addresses only", text)
                      : problem;
      return out;
    }
    if (!rest.empty()) {
      if (rest.front() != ':') {
        out.error = fmt::format("'{}': after ']' only ':PORT' may follow", text);
        return out;
      }
      if (auto problem = port_problem(rest.substr(1), out.port); !problem.empty()) {
        out.error = problem;
        return out;
      }
    }
    out.host = std::string(inside);
    return out;
  }
  const auto colon = text.find(':');
  if (colon != std::string_view::npos && text.find(':', colon + 1) != std::string_view::npos) {
    // Two or more colons: an IPv6 address, written bare.
    if (auto problem = ipv6_problem(text); !problem.empty()) {
      out.error = problem;
      return out;
    }
    out.host = std::string(text);
    return out;
  }
  std::string_view host = text.substr(0, colon);
  if (colon != std::string_view::npos) {
    if (auto problem = port_problem(text.substr(colon + 1), out.port); !problem.empty()) {
      out.error = problem;
      return out;
    }
  }
  if (host.empty()) {
    out.error = fmt::format("'{}' has no host before ':'", text);
    return out;
  }
  if (host.find(']') != std::string_view::npos) {
    out.error = fmt::format("'{}' has an unbalanced ']'", text);
    return out;
  }
  if (!std::all_of(host.begin(), host.end(), name_char)) {
    out.error = fmt::format("'{}' is not a host name or an IP address", host);
    return out;
  }
  out.host = std::string(host);
  return out;
}

std::string unknown_zone(std::string_view host) {
  const auto percent = host.find('%');
  if (percent == std::string_view::npos) return {};
  const std::string zone(host.substr(percent + 1));
  const bool index = !zone.empty() && zone.find_first_not_of("0123456789") == std::string::npos;
  return index || ::if_nametoindex(zone.c_str()) != 0 ? std::string() : zone;
}

std::string format_host_port(std::string_view host, std::uint16_t port) {
  if (host.find(':') != std::string_view::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

}  // namespace volley::core
