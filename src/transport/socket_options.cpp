#include "volley/transport/socket_options.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <limits>

namespace volley::transport {
namespace {

boost::system::error_code last_error() { return {errno, boost::system::system_category()}; }

}  // namespace

boost::system::error_code apply_options(boost::asio::ip::tcp::socket& socket,
                                        const profile::ConnectionOptions& options) {
  boost::system::error_code ec;
  if (options.window_bytes) {
    const auto bytes = static_cast<int>(
        std::min<std::uint64_t>(*options.window_bytes, std::numeric_limits<int>::max()));
    socket.set_option(boost::asio::socket_base::send_buffer_size(bytes), ec);
    if (ec) return ec;
    socket.set_option(boost::asio::socket_base::receive_buffer_size(bytes), ec);
    if (ec) return ec;
  }
  if (options.tcp_nodelay) {
    socket.set_option(boost::asio::ip::tcp::no_delay(true), ec);
    if (ec) return ec;
  }
  if (!options.congestion_control.empty()) {
    const auto& name = options.congestion_control;
    if (::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_CONGESTION, name.data(),
                     static_cast<socklen_t>(name.size())) != 0) {
      return last_error();
    }
  }
  return {};
}

std::optional<std::uint64_t> effective_send_buffer(boost::asio::ip::tcp::socket& socket) {
  boost::asio::socket_base::send_buffer_size size;
  boost::system::error_code ec;
  socket.get_option(size, ec);
  if (ec || size.value() < 0) return std::nullopt;
  return static_cast<std::uint64_t>(size.value());
}

}  // namespace volley::transport
