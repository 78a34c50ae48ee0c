#pragma once
// srcaddr=: the source address a strand's connect binds to before it connects, shared by the TCP
// connect (tcp_ops.cpp) and the UDP one (udp_ops.cpp) so that both mean the same.
#include <cstdint>
#include <string>
#include <vector>

#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/system/error_code.hpp>
#include <fmt/format.h>

namespace volley::engine {

/// Binds `socket` (open, not yet connected) to strand `strand`'s address of `sources`: strand by
/// strand in turn, the (strand mod n)-th, as each source address has its own ephemeral ports.
/// Returns the address it tried (for bind_source_context), nullptr when `sources` is empty;
/// `ec` says why the bind failed (EADDRNOTAVAIL: not an address of this host).
template <typename Socket>
const std::string* bind_source(Socket& socket, const std::vector<std::string>& sources,
                               std::uint64_t strand, const boost::asio::ip::address& remote,
                               boost::system::error_code& ec) {
  if (sources.empty()) return nullptr;
  const std::string& source = sources[strand % sources.size()];
  const boost::asio::ip::address address = boost::asio::ip::make_address(source, ec);
  if (!ec && address.is_v4() != remote.is_v4()) {
    ec = boost::asio::error::address_family_not_supported;
  }
  if (!ec) socket.bind(typename Socket::endpoint_type(address, 0), ec);
  return &source;
}

/// What a failed bind_source was doing, for its error message.
inline std::string bind_source_context(const std::string& source,
                                       const boost::asio::ip::address& remote) {
  return fmt::format("bind to srcaddr {} (to reach {})", source, remote.to_string());
}

}  // namespace volley::engine
