#pragma once
// A strand: one of a group's N identical flows (uperf's "thread"), run as a coroutine on its
// worker. Its state is explicit (which transaction, which connections, why it was cut) so that
// the worker can end or cancel it and tests can reason about it. Thread: worker-affine.
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "volley/engine/plan.hpp"
#include "volley/engine/random_stream.hpp"
#include "volley/engine/step_bytes.hpp"
#include "volley/transport/connection.hpp"
#include "worker.hpp"

namespace volley::engine {

/// What one execution of a flowop came to.
struct OpOutcome {
  enum class Status { kOk, kFailed, kExpired };
  Status status = Status::kOk;
  ErrorKind error = ErrorKind::kOther;
  std::string message;  ///< for failures: what happened, for the error log
};

class Strand {
 public:
  using Clock = std::chrono::steady_clock;
  using Socket = boost::asio::ip::tcp::socket;

  Strand(Worker& worker, std::size_t group, std::uint64_t index);

  /// The whole life of the strand: every transaction in order, waiting at each barrier.
  boost::asio::awaitable<void> run();

  /// A connection the peer opened for connection `conn` has arrived.
  void deliver(std::uint32_t conn, transport::AnyConnection link);
  /// Cancels whatever the strand is waiting for, if it is inside transaction `txn`.
  void cut(std::size_t txn, CutReason reason);
  /// Cancels whatever the strand waits for, whatever transaction it is in.
  void stop();
  [[nodiscard]] bool failed() const { return failed_; }
  /// Closes every connection the profile left open; only once run() has ended.
  void close_all();
  /// Between steps (src/engine/step_drain.cpp): reads, on each connection in `peer_written`,
  /// until this side has read all the peer wrote on it during step `txn`, or `deadline`.
  boost::asio::awaitable<std::vector<DrainShortfall>> drain(
      std::size_t txn, std::vector<ConnectionBytes> peer_written, Clock::time_point deadline,
      std::span<char> buffer);

 private:
  struct Connection {
    std::uint32_t id = 0;
    transport::AnyConnection link;
    std::uint32_t serial = 0;        ///< see ConnectionBytes
    std::uint64_t step_read = 0;     ///< bytes read on it in the current step
    std::uint64_t step_written = 0;  ///< bytes written on it in the current step
  };

  /// At a step's release: the step's byte counts start at 0, and its random streams afresh.
  void begin_step();
  /// At a step's end: hands the bytes written on each open connection to the worker.
  void report_step_written();
  std::uint32_t next_serial(std::uint32_t id);

  boost::asio::awaitable<void> run_txn(const TxnPlan& txn);
  /// One pass over the transaction's flowops; `intended` is when it should have started (the
  /// pacing schedule), `started` when it did. False when the strand must stop.
  boost::asio::awaitable<bool> run_iteration(const TxnPlan& txn, Clock::time_point intended,
                                             Clock::time_point started);
  boost::asio::awaitable<OpOutcome> execute(const OpPlan& op);
  boost::asio::awaitable<OpOutcome> do_connect(const OpPlan& op, const profile::ConnectOp& c);
  boost::asio::awaitable<OpOutcome> do_accept(const OpPlan& op, const profile::AcceptOp& a);
  enum class Direction { kRead, kWrite };
  /// Moves exactly `bytes` on the op's connection, at most `chunk` per system call.
  boost::asio::awaitable<OpOutcome> transfer(const OpPlan& op, Direction direction,
                                             std::uint64_t bytes,
                                             std::optional<std::uint64_t> chunk);
  /// Waits until `link` is ready; nullopt when it is, else the outcome that ends the op.
  boost::asio::awaitable<std::optional<OpOutcome>> wait_ready(transport::AnyConnection& link,
                                                             transport::Wait what,
                                                             const char* op_name);
  boost::asio::awaitable<OpOutcome> do_sendfile(const OpPlan& op, std::uint64_t nfiles,
                                                std::optional<std::uint64_t> chunk);
  boost::asio::awaitable<OpOutcome> do_think(const profile::ThinkOp& t);
  /// Sleeps until `when`; false when cut or when the transaction's deadline came first.
  boost::asio::awaitable<bool> sleep_until(Clock::time_point when);
  static boost::asio::awaitable<OpOutcome> ready(OpOutcome out);
  boost::asio::awaitable<OpOutcome> not_connected_now(const OpPlan& op);
  void cancel_waits();
  void add_read(const OpPlan& op, std::uint64_t n);
  void add_written(const OpPlan& op, std::uint64_t n);
  std::size_t pick_file(const OpPlan& op, const FileSet& set);
  std::uint64_t draw_file_bytes(const OpPlan& op, std::uint64_t nfiles);

  Connection* find(std::uint32_t id);
  transport::TcpConnection& fresh_tcp(std::uint32_t id);
  void close(std::uint32_t id);
  std::uint64_t draw_size(const OpPlan& op, const profile::SizeSpec& size);
  RandomStream& stream(std::uint32_t conn);
  OpOutcome failure_from(const boost::system::error_code& ec, const std::string& what);
  OpOutcome not_connected(const OpPlan& op);
  OpOutcome aborted_outcome();
  std::string where(const OpPlan& op) const;

  Worker& worker_;
  std::size_t group_;
  std::uint64_t index_;
  std::vector<Connection> connections_;  ///< oldest first; one id may have several (a pool)
  /// Accepted, not yet taken.
  std::vector<std::pair<std::uint32_t, std::vector<transport::AnyConnection>>> inbox_;
  std::optional<std::uint32_t> awaiting_conn_;  ///< accept waits for this connection
  boost::asio::steady_timer timer_;             ///< think, pacing and accept waits
  boost::asio::steady_timer op_timer_;          ///< per-flowop timeout=
  transport::AnyConnection* active_ = nullptr;  ///< the connection of the operation in progress
  std::vector<std::pair<std::uint32_t, RandomStream>> streams_;  ///< per connection id, lazily
  std::vector<std::pair<std::uint32_t, std::uint32_t>> opened_;  ///< per connection id: serials used
  std::size_t txn_ = 0;
  bool in_txn_ = false;
  std::optional<Clock::time_point> deadline_;
  CutReason cut_ = CutReason::kNone;
  bool failed_ = false;
  std::uint64_t op_seq_ = 0;  ///< tells a late timeout from the operation it was armed for
  std::uint32_t txn_slot_ = 0;
  std::uint64_t iteration_bytes_read_ = 0;
  std::uint64_t iteration_bytes_written_ = 0;
};

}  // namespace volley::engine
