#include "volley/transport/data_listener.hpp"

#include <boost/asio/read.hpp>
#include <fmt/format.h>

#include <utility>

namespace volley::transport {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

/// A connection whose header is still on its way. Heap-held so its buffer outlives a close().
struct PendingHeader {
  explicit PendingHeader(tcp::socket s) : socket(std::move(s)) {}
  tcp::socket socket;
  std::array<std::uint8_t, kConnectionHeaderBytes> bytes{};
};

}  // namespace

DataListener::DataListener(asio::io_context& context, std::uint32_t token, Route route)
    : token_(token),
      route_(std::move(route)),
      acceptor_(context),
      alive_(std::make_shared<bool>(true)) {}

DataListener::~DataListener() { close(); }

std::string DataListener::open(const asio::ip::address& address, std::uint16_t port,
                               std::optional<std::uint64_t> window_bytes) {
  boost::system::error_code ec;
  const tcp::endpoint endpoint(address, port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec && window_bytes) {
    // Set before listen() so that accepted sockets inherit them and the window scale fits.
    const auto bytes = static_cast<int>(std::min<std::uint64_t>(*window_bytes, 1U << 30));
    acceptor_.set_option(asio::socket_base::receive_buffer_size(bytes), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::send_buffer_size(bytes), ec);
  }
  if (!ec) acceptor_.bind(endpoint, ec);
  // The kernel caps the backlog at net.core.somaxconn; ask for the most so a connection storm of
  // thousands of strands is not refused.
  if (!ec) acceptor_.listen(65535, ec);
  if (ec) {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    return fmt::format("cannot listen for data connections on {}:{}: {}", address.to_string(),
                       port, ec.message());
  }
  return {};
}

std::uint16_t DataListener::port() const {
  boost::system::error_code ec;
  const auto endpoint = acceptor_.local_endpoint(ec);
  return ec ? 0 : endpoint.port();
}

void DataListener::start() { accept_next(); }

void DataListener::close() {
  if (!*alive_) return;
  *alive_ = false;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

void DataListener::accept_next() {
  acceptor_.async_accept(
      [this, alive = alive_](const boost::system::error_code& ec, tcp::socket socket) {
        if (!*alive) return;
        if (ec == asio::error::operation_aborted) return;
        if (!ec) read_header(std::move(socket));
        // EMFILE and friends: keep accepting; the connecting strand sees its own error or
        // timeout, and the listener must not die for one bad accept.
        accept_next();
      });
}

void DataListener::read_header(tcp::socket socket) {
  auto pending = std::make_unique<PendingHeader>(std::move(socket));
  auto& ref = *pending;
  asio::async_read(
      ref.socket, asio::buffer(ref.bytes),
      [this, alive = alive_, pending = std::move(pending)](const boost::system::error_code& ec,
                                                           std::size_t) mutable {
        if (!*alive) return;
        if (ec) {
          ++rejected_;
          return;
        }
        const auto header = decode_connection_header(pending->bytes);
        if (!header || header->token != token_) {
          ++rejected_;
          return;
        }
        route_(*header, std::move(pending->socket));
      });
}

}  // namespace volley::transport
