#pragma once
// srcaddr=: the source address a strand's connect binds to before it connects, shared by the TCP
// connect (tcp_ops.cpp) and the UDP one (udp_ops.cpp) so that both mean the same.
#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/asio/detail/socket_option.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>
#include <fmt/format.h>

namespace volley::engine {

/// Binds `socket` (open, not yet connected) to strand `strand`'s address of `sources`: strand by
/// strand in turn, the (strand mod n)-th, as each source address has its own ephemeral ports.
/// A TCP socket binds the address only (IP_BIND_ADDRESS_NO_PORT): its port is then chosen at the
/// connect, unique per destination address and port, so one source address holds the whole
/// ephemeral range towards each destination port rather than once in all (a bind to port 0 takes
/// a port for itself alone). Returns the address it tried (for bind_source_context), nullptr when
/// `sources` is empty; `ec` says why the bind failed (EADDRNOTAVAIL: not an address of this
/// host).
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
  if constexpr (std::is_same_v<typename Socket::protocol_type, boost::asio::ip::tcp>) {
    // Where the kernel lacks it (before Linux 4.2) the bind takes a port, as it did there.
    boost::system::error_code older_kernel;
    if (!ec) {
      socket.set_option(
          boost::asio::detail::socket_option::boolean<IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT>(true),
          older_kernel);
    }
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
