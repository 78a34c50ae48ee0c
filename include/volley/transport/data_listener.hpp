#pragma once
// The accepting side's data listener: accepts connections, reads each one's ConnectionHeader, and
// hands the socket to whoever routes it to the owning strand. The engine opens one per worker on
// each data port (the workers of a port share it with SO_REUSEPORT, or have a port each), so
// accepts and header reads run on every core. Thread: runs on the io_context it was opened with;
// close() on that thread; queued() and pending() from any thread.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "volley/transport/connection_header.hpp"

namespace volley::transport {

/// The kernel's cap on a listener's accept queue (net.core.somaxconn; 4096 if unreadable).
std::uint64_t accept_backlog();

class DataListener {
 public:
  /// Called for every connection whose header carried the expected token, on the listener's
  /// thread. The callee takes the socket (and moves it to another io_context if it needs to).
  using Route = std::function<void(const ConnectionHeader&, boost::asio::ip::tcp::socket)>;

  /// Called with one log line for every connection closed without being routed: its header came
  /// late, never, without the magic, or with a wrong token. The peer in it is escaped.
  using Reject = std::function<void(const std::string& line)>;

  /// A connection whose 20-byte header has not arrived within this time is closed.
  static constexpr std::chrono::milliseconds kHeaderTimeout{5000};

  DataListener(boost::asio::io_context& context, std::uint32_t token, Route route,
               std::chrono::milliseconds header_timeout = kHeaderTimeout, Reject reject = {});
  ~DataListener();
  DataListener(const DataListener&) = delete;
  DataListener& operator=(const DataListener&) = delete;

  /// Binds and listens on `address:port` (port 0 = any free port). With `share_port`, other
  /// listeners of this user may bind the same port (SO_REUSEPORT) and the kernel spreads the
  /// incoming connections over them. Returns an error sentence.
  std::string open(const boost::asio::ip::address& address, std::uint16_t port,
                   std::optional<std::uint64_t> window_bytes, bool share_port = false);
  [[nodiscard]] std::uint16_t port() const;
  /// Starts accepting (after open succeeded).
  void start();
  /// Stops accepting; closes connections whose header has not arrived yet.
  void close();
  /// Connections accepted whose header has not arrived yet.
  [[nodiscard]] std::size_t pending() const { return pending_count_.load(std::memory_order_relaxed); }
  /// Connections the kernel has completed but this listener has not yet accepted (its accept
  /// queue, from TCP_INFO), plus those whose header is still being read.
  [[nodiscard]] std::size_t queued() const;
  /// Connections rejected for a bad or foreign header.
  [[nodiscard]] std::uint64_t rejected() const { return rejected_; }

 private:
  void accept_next();
  void read_header(boost::asio::ip::tcp::socket socket);
  /// Counts a connection closed without being routed and tells `reject_` why.
  void refuse(const boost::asio::ip::tcp::endpoint& peer, const std::string& reason);

  struct Pending;
  /// Closes the connection when its deadline passes, unless bytes wait unread and `grace` is not
  /// zero: then once more after `grace`.
  static void arm_deadline(const std::shared_ptr<Pending>& pending, std::chrono::milliseconds grace);

  std::uint32_t token_;
  Route route_;
  Reject reject_;
  std::chrono::milliseconds header_timeout_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer backoff_;
  /// Connections still owed a header, so close() can close them (a peer that never sends one
  /// must not pin a descriptor for the life of the slave).
  std::map<std::uint64_t, std::shared_ptr<Pending>> pending_;
  std::uint64_t next_pending_ = 0;
  std::atomic<std::size_t> pending_count_{0};  ///< pending_.size(), for other threads
  std::atomic<int> fd_{-1};  ///< the listening descriptor while open, for queued()
  /// Accepting paused: kMaxPending headers are being read (the rest wait in the kernel's accept
  /// queue, costing this process nothing).
  bool paused_ = false;
  std::shared_ptr<bool> alive_;  // lets in-flight header reads notice close()
  std::uint64_t rejected_ = 0;
};

}  // namespace volley::transport
