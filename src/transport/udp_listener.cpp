#include "volley/transport/udp_listener.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "volley/core/host_port.hpp"
#include "volley/transport/address_family.hpp"
#include "volley/transport/datagram.hpp"

namespace volley::transport {

namespace asio = boost::asio;
using asio::ip::udp;

UdpListener::UdpListener(asio::io_context& context, RunTokens tokens, Route route)
    : tokens_(tokens), route_(std::move(route)), socket_(context) {}

UdpListener::~UdpListener() { close(); }

std::string UdpListener::open(const asio::ip::address& address, std::uint16_t port,
                              std::optional<std::uint64_t> window_bytes) {
  address_ = address;
  window_bytes_ = window_bytes;
  boost::system::error_code ec;
  const udp::endpoint endpoint(address, port);
  socket_.open(endpoint.protocol(), ec);
  if (!ec) ec = take_ipv4_too(socket_, address);
  if (!ec) socket_.bind(endpoint, ec);
  if (ec) {
    boost::system::error_code ignored;
    socket_.close(ignored);
    return fmt::format("cannot listen for UDP data connections on {}: {}",
                       core::format_host_port(address.to_string(), port), ec.message());
  }
  open_ = true;
  return {};
}

void UdpListener::start() { receive_next(); }

std::uint16_t UdpListener::port() const {
  boost::system::error_code ec;
  const auto local = socket_.local_endpoint(ec);
  return ec ? 0 : local.port();
}

void UdpListener::close() {
  if (!open_) return;
  open_ = false;
  boost::system::error_code ignored;
  socket_.close(ignored);
}

void UdpListener::receive_next() {
  socket_.async_receive_from(asio::buffer(buffer_), from_,
                             [this](const boost::system::error_code& ec, std::size_t bytes) {
                               if (ec == asio::error::operation_aborted || !open_) return;
                               if (!ec) on_hello(bytes);
                               receive_next();
                             });
}

void UdpListener::on_hello(std::size_t bytes) {
  const auto header = decode_udp_hello(std::span<const char>(buffer_.data(), bytes), tokens_);
  if (!header) {
    ++rejected_;
    return;
  }
  boost::system::error_code ec;
  const Key key{from_, header->group, header->strand, header->conn};
  auto it = answered_.find(key);
  if (it == answered_.end()) {
    udp::socket socket(socket_.get_executor());
    socket.open(from_.protocol(), ec);
    if (!ec && window_bytes_) {
      const auto n = static_cast<int>(std::min<std::uint64_t>(*window_bytes_, 1U << 30));
      socket.set_option(asio::socket_base::receive_buffer_size(n), ec);
      if (!ec) socket.set_option(asio::socket_base::send_buffer_size(n), ec);
    }
    if (!ec) socket.bind(udp::endpoint(address_, 0), ec);
    if (!ec) socket.connect(from_, ec);
    std::uint16_t port = 0;
    if (!ec) port = socket.local_endpoint(ec).port();
    if (ec) return;  // the connecting side asks again, and fails at its own limit
    it = answered_.emplace(key, port).first;
    route_(*header, std::move(socket));
  }
  const auto ack = encode_ack(header->token, it->second);
  socket_.send_to(asio::buffer(ack), from_, 0, ec);  // a lost answer is asked for again
}

}  // namespace volley::transport
