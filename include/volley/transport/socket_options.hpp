#pragma once
// The TCP socket options a connect or accept flowop asks for (wndsz, tcp_nodelay, cc).
#include <cstdint>
#include <optional>

#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>

#include "volley/profile/model.hpp"

namespace volley::transport {

/// Applies buffer sizes (before connect/listen so window scaling sees them), TCP_NODELAY and
/// TCP_CONGESTION to an open socket. Returns the first error.
boost::system::error_code apply_options(boost::asio::ip::tcp::socket& socket,
                                        const profile::ConnectionOptions& options);

/// The send buffer the kernel actually gave (Linux doubles the requested value).
std::optional<std::uint64_t> effective_send_buffer(boost::asio::ip::tcp::socket& socket);

}  // namespace volley::transport
