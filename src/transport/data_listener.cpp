#include "volley/transport/data_listener.hpp"

#include <boost/asio/read.hpp>
#include <fmt/format.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <utility>

#include "volley/core/host_port.hpp"
#include "volley/core/printable.hpp"
#include "volley/transport/address_family.hpp"

namespace volley::transport {

std::uint64_t accept_backlog() {
  std::ifstream in("/proc/sys/net/core/somaxconn");
  std::uint64_t n = 0;
  return (in >> n) && n > 0 ? n : 4096;
}

int default_descriptor_ceiling() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
      limit.rlim_cur >= static_cast<rlim_t>(std::numeric_limits<int>::max())) {
    return std::numeric_limits<int>::max();
  }
  return std::max(1, static_cast<int>(limit.rlim_cur) - DataListener::kDescriptorReserve);
}

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {
/// After an accept fails for want of descriptors, wait this long instead of spinning.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);
}  // namespace

/// A connection whose header is still on its way. Shared with the read's handler so its buffer
/// outlives a close().
struct DataListener::Pending {
  Pending(tcp::socket s, const asio::any_io_executor& executor)
      : socket(std::move(s)), deadline(executor) {}
  tcp::socket socket;
  tcp::endpoint peer;  // kept: a socket closed by the deadline no longer knows it
  asio::steady_timer deadline;
  /// Why the socket was closed before its read ended (the read then fails with "aborted").
  enum class Closed { kNo, kDeadline, kReplacedBySameAddress, kReplaced };
  Closed closed = Closed::kNo;
  std::array<std::uint8_t, kConnectionHeaderBytes> bytes{};
};

DataListener::DataListener(asio::io_context& context, RunTokens tokens, Route route,
                           std::chrono::milliseconds header_timeout, Reject reject,
                           SourceQuota::Limits pending_limits)
    : tokens_(tokens),
      route_(std::move(route)),
      reject_(std::move(reject)),
      header_timeout_(header_timeout),
      acceptor_(context),
      backoff_(context),
      quota_(pending_limits),
      alive_(std::make_shared<bool>(true)),
      descriptor_ceiling_(default_descriptor_ceiling()) {}

DataListener::~DataListener() { close(); }

std::string DataListener::open(const asio::ip::address& address, std::uint16_t port,
                               std::optional<std::uint64_t> window_bytes, bool share_port) {
  boost::system::error_code ec;
  const tcp::endpoint endpoint(address, port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) ec = take_ipv4_too(acceptor_, address);
  if (!ec && share_port) {
    acceptor_.set_option(asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>(true), ec);
  }
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
    return fmt::format("cannot listen for data connections on {}: {}",
                       core::format_host_port(address.to_string(), port), ec.message());
  }
  fd_.store(acceptor_.native_handle(), std::memory_order_relaxed);
  return {};
}

std::size_t DataListener::queued() const {
  tcp_info info{};
  socklen_t size = sizeof info;
  // On a listening socket tcpi_unacked is the accept queue's length.
  const int fd = fd_.load(std::memory_order_relaxed);
  return fd >= 0 && ::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) == 0 ? info.tcpi_unacked
                                                                               : 0;
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
  fd_.store(-1, std::memory_order_relaxed);
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  backoff_.cancel();
  // Counted and told like every connection closed without being routed: the run's tally of
  // strangers' connections includes those still waiting when it ends.
  for (auto& [id, pending] : pending_) {
    pending->deadline.cancel();
    pending->socket.close(ignored);
    refuse(pending->peer, "the run ended before its header came");
  }
  pending_.clear();
  pending_count_.store(0, std::memory_order_relaxed);
}

void DataListener::accept_next() {
  acceptor_.async_accept(accepted_from_, [this, alive = alive_](const boost::system::error_code& ec,
                                                                tcp::socket socket) {
    if (!*alive) return;
    if (ec == asio::error::operation_aborted) return;
    if (!ec) {
      // Numbered from the lowest free one: one just below the ceiling means the process holds
      // nearly that many. From then on each accept first looks whether a descriptor below the
      // ceiling is free (two system calls): whether the next one would land below it cannot be
      // told from this number once connections close and leave gaps below it.
      if (socket.native_handle() + 1 >= descriptor_ceiling_) pressed_ = true;
      read_header(std::move(socket), accepted_from_);
    }
    // EMFILE and friends (descriptors another part of the process took): keep accepting, but
    // after a pause: the connection waits in the backlog, and retrying at once would spin on
    // the same error.
    if (ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
        ec == boost::system::errc::too_many_files_open_in_system || ec == asio::error::no_memory) {
      pressed_ = true;
      accept_later(kAcceptBackoff);
      return;
    }
    if (pressed_ && lowest_free_descriptor() >= descriptor_ceiling_) {
      accept_later(kCeilingRecheck);
      return;
    }
    accept_next();
  });
}

void DataListener::accept_later(std::chrono::milliseconds pause) {
  backoff_.expires_after(pause);
  backoff_.async_wait([this, alive = alive_](const boost::system::error_code& wait_ec) {
    if (wait_ec || !*alive) return;
    // Still at the ceiling (no connection of the step closed yet): look again shortly.
    if (lowest_free_descriptor() >= descriptor_ceiling_) {
      accept_later(kCeilingRecheck);
      return;
    }
    accept_next();
  });
}

int DataListener::lowest_free_descriptor() const {
  const int listening = fd_.load(std::memory_order_relaxed);
  const int probe = listening < 0 ? -1 : ::fcntl(listening, F_DUPFD_CLOEXEC, 0);
  if (probe < 0) return std::numeric_limits<int>::max();
  ::close(probe);
  return probe;
}

void DataListener::arm_deadline(const std::shared_ptr<Pending>& pending,
                                std::chrono::milliseconds grace) {
  pending->deadline.async_wait([pending, grace](const boost::system::error_code& ec) {
    if (ec) return;
    boost::system::error_code ignored;
    // Bytes waiting unread: the peer did send, and this thread, not the peer, is late (a loaded
    // host with thousands of connects in flight). One more deadline, not an endless one, so a
    // peer sending a byte at a time still cannot hold the socket.
    if (grace.count() > 0 && pending->socket.available(ignored) > 0) {
      pending->deadline.expires_after(grace);
      DataListener::arm_deadline(pending, std::chrono::milliseconds(0));
      return;
    }
    pending->closed = Pending::Closed::kDeadline;
    pending->socket.close(ignored);  // the read below then fails and forgets it
  });
}

void DataListener::read_header(tcp::socket socket, const tcp::endpoint& peer) {
  const std::uint64_t id = next_pending_++;
  const auto decision = quota_.admit(id, peer.address());
  if (decision.verdict != SourceQuota::Verdict::kAdmitted) evict(decision.evict, decision.verdict);
  auto pending = std::make_shared<Pending>(std::move(socket), acceptor_.get_executor());
  pending_[id] = pending;
  pending_count_.store(pending_.size(), std::memory_order_relaxed);
  pending->peer = peer;
  pending->deadline.expires_after(header_timeout_);
  arm_deadline(pending, header_timeout_);
  asio::async_read(
      pending->socket, asio::buffer(pending->bytes),
      [this, alive = alive_, id, pending](const boost::system::error_code& ec, std::size_t) {
        if (!*alive) return;
        pending_.erase(id);
        quota_.forget(id);
        pending_count_.store(pending_.size(), std::memory_order_relaxed);
        pending->deadline.cancel();
        if (ec) {
          refuse(pending->peer, why_closed(*pending, ec));
          return;
        }
        const auto header = decode_connection_header(pending->bytes);
        if (!header) {
          refuse(pending->peer, "not a volley data header");
          return;
        }
        if (!tokens_.peer_of(header->token)) {
          refuse(pending->peer, "wrong run token (another run's connection, or a stranger's)");
          return;
        }
        route_(*header, std::move(pending->socket));
      });
}

std::string DataListener::why_closed(const Pending& pending,
                                     const boost::system::error_code& ec) const {
  switch (pending.closed) {
    case Pending::Closed::kDeadline:
      return fmt::format("no header within {} ms (volley serve --header-timeout)",
                         header_timeout_.count());
    case Pending::Closed::kReplacedBySameAddress:
      return fmt::format(
          "closed to make room for a newer one from its address, which held {} "
          "connections waiting for their header, the most one address may",
          quota_.limits().per_source);
    case Pending::Closed::kReplaced:
      return fmt::format(
          "closed to make room: {} connections waited for their header, the most "
          "this listener holds, and its address held the most of them",
          quota_.limits().total);
    case Pending::Closed::kNo: break;
  }
  return fmt::format("closed before its header ({})", ec.message());
}

void DataListener::evict(std::uint64_t id, SourceQuota::Verdict why) {
  const auto it = pending_.find(id);
  if (it == pending_.end()) return;
  boost::system::error_code ignored;
  it->second->closed = why == SourceQuota::Verdict::kReplacesOwnOldest
                           ? Pending::Closed::kReplacedBySameAddress
                           : Pending::Closed::kReplaced;
  it->second->deadline.cancel();
  it->second->socket.close(ignored);  // its read fails, refuses it and forgets it
}

void DataListener::refuse(const tcp::endpoint& peer, const std::string& reason) {
  ++rejected_;
  if (!reject_) return;
  const std::string who =
      core::printable(core::format_host_port(unmapped(peer.address()).to_string(), peer.port()));
  reject_(fmt::format("data connection from {} closed: {}", who, reason));
}

}  // namespace volley::transport
