#pragma once
// The accepting side's data listener: accepts connections, reads each one's ConnectionHeader, and
// hands the socket to whoever routes it to the owning strand. The engine opens one per worker on
// each data port (the workers of a port share it with SO_REUSEPORT, or have a port each), so
// accepts and header reads run on every core. It never takes a process's last descriptors: at
// its descriptor ceiling (kDescriptorReserve below the process's limit) it stops accepting, and
// the connections wait in the accept queue until descriptors are free again. Thread: runs on the
// io_context it was opened with; close() on that thread; queued() and pending() from any thread.
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
#include "volley/transport/source_quota.hpp"

namespace volley::transport {

/// The kernel's cap on a listener's accept queue (net.core.somaxconn; 4096 if unreadable).
std::uint64_t accept_backlog();

class DataListener {
 public:
  /// Called for every connection whose header carried one of the run's tokens, on the listener's
  /// thread. The callee takes the socket (and moves it to another io_context if it needs to).
  using Route = std::function<void(const ConnectionHeader&, boost::asio::ip::tcp::socket)>;

  /// Called with one log line for every connection closed without being routed: its header came
  /// late, never, without the magic, or with a wrong token. The peer in it is escaped.
  using Reject = std::function<void(const std::string& line)>;

  /// A connection whose 20-byte header has not arrived within this time is closed.
  static constexpr std::chrono::milliseconds kHeaderTimeout{5000};
  /// Header reads in flight, per source address and in all. A connect takes a place from its
  /// accept until its header is read (microseconds for a real peer, whose header follows its
  /// connect at once; up to --header-timeout for a stranger's). One address is granted 1,024:
  /// a master has at most 128 connects in flight per worker (engine::ConnectGate) and spreads
  /// them over the slave's listeners, one per slave worker, so a master of 8 workers whose
  /// connects in flight all went to one listener still fits, and real masters spread theirs.
  /// 4,096 in all bound the memory of a storm (a socket, a timer and a read each). Beyond
  /// either, a newcomer takes the place of the oldest connection of its own address, or of the
  /// address that holds the most (SourceQuota): a real header arrives within a round trip of
  /// its connect, so it is read long before it would be the oldest.
  static constexpr SourceQuota::Limits kPendingLimits{1024, 4096};
  /// Descriptors the listener leaves free for the rest of its process (the control link,
  /// /proc and output files, a worker's wake-ups, a sanitizer's probes): a storm of connections
  /// waiting to be read must not leave a process unable to open anything else, where every
  /// open(2), pipe(2) and socket(2) fails with EMFILE.
  static constexpr int kDescriptorReserve = 128;

  DataListener(boost::asio::io_context& context, RunTokens tokens, Route route,
               std::chrono::milliseconds header_timeout = kHeaderTimeout, Reject reject = {},
               SourceQuota::Limits pending_limits = kPendingLimits);
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
  /// Stops accepting; closes connections whose header has not arrived yet (each counted and
  /// told to `reject` like any other closed without being routed).
  void close();
  /// Connections accepted whose header has not arrived yet.
  [[nodiscard]] std::size_t pending() const {
    return pending_count_.load(std::memory_order_relaxed);
  }
  /// Connections the kernel has completed but this listener has not yet accepted (its accept
  /// queue, from TCP_INFO). Not those whose header is still being read: until its header is
  /// read a connection may be anyone's, so it is no sign that the run has work on its way (a
  /// stranger holding one open must not hold a step open). The listener accepts without pause
  /// (the limits above replace connections rather than leave them queued) until its descriptor
  /// ceiling, so the queue is what arrived since the last accept, or what waits for descriptors
  /// to be free (work still on its way all the same).
  [[nodiscard]] std::size_t queued() const;
  /// Connections rejected for a bad or foreign header.
  [[nodiscard]] std::uint64_t rejected() const { return rejected_; }
  /// The descriptor number the listener never accepts at or above: kDescriptorReserve below this
  /// process's limit (RLIMIT_NOFILE) by default. Descriptors are numbered from the lowest free
  /// one, so a connection accepted just below it means the process holds nearly that many; from
  /// then on the listener accepts only while a descriptor below it is free, and otherwise waits,
  /// looking again every kCeilingRecheck.
  void set_descriptor_ceiling(int ceiling) { descriptor_ceiling_ = ceiling; }
  [[nodiscard]] int descriptor_ceiling() const { return descriptor_ceiling_; }
  static constexpr std::chrono::milliseconds kCeilingRecheck{10};

 private:
  struct Pending;
  void accept_next();
  /// Accepts again after `pause`, once the process has descriptors below the ceiling.
  void accept_later(std::chrono::milliseconds pause);
  /// The lowest descriptor number free in this process (INT_MAX when none is).
  [[nodiscard]] int lowest_free_descriptor() const;
  /// Reads the header of `socket`, accepted from `peer`.
  void read_header(boost::asio::ip::tcp::socket socket, const boost::asio::ip::tcp::endpoint& peer);
  /// Closes connection `id`'s socket to make room for a newcomer (`why`: which place it takes);
  /// its read then ends and refuses it.
  void evict(std::uint64_t id, SourceQuota::Verdict why);
  /// Why a pending connection's read ended with `ec`.
  [[nodiscard]] std::string why_closed(const Pending& pending,
                                       const boost::system::error_code& ec) const;
  /// Counts a connection closed without being routed and tells `reject_` why.
  void refuse(const boost::asio::ip::tcp::endpoint& peer, const std::string& reason);

  /// Closes the connection when its deadline passes, unless bytes wait unread and `grace` is not
  /// zero: then once more after `grace`.
  static void arm_deadline(const std::shared_ptr<Pending>& pending,
                           std::chrono::milliseconds grace);

  RunTokens tokens_;
  Route route_;
  Reject reject_;
  std::chrono::milliseconds header_timeout_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer backoff_;
  /// Where the connection being accepted comes from: the accept's own answer (no getpeername).
  boost::asio::ip::tcp::endpoint accepted_from_;
  /// Connections still owed a header, so close() can close them (a peer that never sends one
  /// must not pin a descriptor for the life of the slave).
  std::map<std::uint64_t, std::shared_ptr<Pending>> pending_;
  std::uint64_t next_pending_ = 0;
  std::atomic<std::size_t> pending_count_{0};  ///< pending_.size(), for other threads
  std::atomic<int> fd_{-1};  ///< the listening descriptor while open, for queued()
  /// The pending connections' places, by source address.
  SourceQuota quota_;
  std::shared_ptr<bool> alive_;  // lets in-flight header reads notice close()
  std::uint64_t rejected_ = 0;
  int descriptor_ceiling_;
  /// An accepted descriptor came within one of the ceiling (or accept failed for want of
  /// descriptors): each accept now first looks for a free one below the ceiling.
  bool pressed_ = false;
};

/// This process's descriptor limit (RLIMIT_NOFILE, soft) less DataListener::kDescriptorReserve;
/// INT_MAX without a limit.
int default_descriptor_ceiling();

}  // namespace volley::transport
