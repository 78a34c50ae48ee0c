#pragma once
// Address-family rules every listener and peer address follows: data connections take the family
// of the control connection, an IPv6 wildcard listener takes IPv4 peers too (dual stack), and an
// IPv4 peer seen through such a listener (::ffff:a.b.c.d) is treated as the IPv4 address it is.
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/system/error_code.hpp>

namespace volley::transport {

/// `address` with an IPv4-mapped IPv6 address (::ffff:a.b.c.d) turned into a.b.c.d; any other
/// address unchanged.
inline boost::asio::ip::address unmapped(const boost::asio::ip::address& address) {
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6());
  }
  return address;
}

/// On an open socket about to bind `address`: when that is IPv6's wildcard (::), IPV6_V6ONLY is
/// turned off so that IPv4 peers reach it too (Linux's default, but net.ipv6.bindv6only can say
/// otherwise). Any other address: nothing to do.
template <class Socket>
boost::system::error_code take_ipv4_too(Socket& socket, const boost::asio::ip::address& address) {
  boost::system::error_code ec;
  if (address.is_v6() && address.is_unspecified()) {
    socket.set_option(boost::asio::ip::v6_only(false), ec);
  }
  return ec;
}

}  // namespace volley::transport
