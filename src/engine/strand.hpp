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
#include <variant>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "volley/engine/plan.hpp"
#include "volley/engine/random_stream.hpp"
#include "volley/engine/step_bytes.hpp"
#include "volley/transport/connection.hpp"
#include "op_message.hpp"
#include "worker.hpp"

namespace volley::engine {

/// What one execution of a flowop came to.
struct OpOutcome {
  /// kLost: a UDP read that ended with no datagram (timeout=); counted, and the strand goes on.
  enum class Status { kOk, kFailed, kExpired, kLost };
  Status status = Status::kOk;
  results::ErrorKind error = results::ErrorKind::kOther;
  OpMessage message;  ///< for failures: what happened, for the error log
};

class Strand {
 public:
  using Clock = std::chrono::steady_clock;
  using Socket = boost::asio::ip::tcp::socket;

  Strand(Worker& worker, std::size_t group, std::uint64_t index);

  /// The whole life of the strand: every transaction in order, waiting at each barrier.
  boost::asio::awaitable<void> run();

  /// A connection slave `peer` (0 on a slave: its master) opened for connection `conn` has
  /// arrived.
  void deliver(std::uint32_t conn, std::uint32_t peer, transport::AnyConnection link);
  /// Cancels whatever the strand is waiting for, if it is inside transaction `txn`; ends `txn`
  /// at once when the strand enters it later.
  void cut(std::size_t txn, CutReason reason);
  /// The peer ended transaction `txn` (a slave, at the master's end_step), having written
  /// `written` on this strand's connections in it: the strand ends the waits nothing can complete
  /// and finishes the rest (see CutReason::kPeerEnded). Kept for a transaction not entered yet.
  void peer_ended(std::size_t txn, std::vector<ConnectionBytes> written);
  /// After the peer's end of the step, when every connection it made has been accepted: an
  /// accept still waiting waits for nothing, and ends.
  void recheck_peer_end();
  /// Cancels whatever the strand waits for, whatever transaction it is in.
  void stop();
  /// At an interval's end, inside a transaction: the TCP state of its open TCP connections joins
  /// `slots`' summary of that transaction (the worker's interval sample).
  void sample_tcp_now(std::vector<results::SlotStats>& slots);
  [[nodiscard]] bool failed() const { return failed_; }
  /// Between steps, before the drain (see Worker::post_drain): every connection the peer made
  /// that this strand never accepted joins its pool, numbered as the peer numbered it.
  void adopt_inbox();
  /// Closes every connection the profile left open; only once run() has ended.
  void close_all();
  /// Between steps (src/engine/step_drain.cpp): reads, on each connection in `peer_written`,
  /// until this side has read all the peer wrote on it during step `txn`, or `deadline`.
  boost::asio::awaitable<std::vector<DrainShortfall>> drain(
      std::size_t txn, std::vector<ConnectionBytes> peer_written, Clock::time_point deadline,
      std::span<char> buffer);

 private:
  /// The counts, touched by every operation, come first and together, ahead of the connection
  /// itself (whose socket state follows them): at thousands of connections each line an
  /// operation touches is a cache miss (bench/callgrind_per_transaction.sh -x cachegrind).
  struct Connection {
    Connection(std::uint32_t conn_id, transport::AnyConnection connection,
               std::uint32_t conn_serial = 0, std::uint32_t conn_peer = 0)
        : id(conn_id), serial(conn_serial), peer(conn_peer), link(std::move(connection)) {}
    std::uint32_t id = 0;
    std::uint32_t serial = 0;  ///< see ConnectionBytes
    std::uint32_t peer = 0;    ///< see ConnectionBytes
    /// Bytes a read took from the socket beyond what its flowop wanted: the next reads' (and the
    /// step drain's) first. A count only: what was read is never looked at, so not kept.
    std::uint64_t stash = 0;
    std::uint64_t step_read = 0;     ///< bytes read on it in the current step
    std::uint64_t step_written = 0;  ///< bytes written on it in the current step
    transport::AnyConnection link;
  };

  /// What the strand waits for, when it waits: what the peer's end of the step decides on.
  /// kHello: a UDP connect's wait for the listener's answer, which the peer's listener sends
  /// whether or not its strand still accepts.
  enum class Waiting : std::uint8_t {
    kNothing, kRead, kWrite, kConnect, kHello, kAccept, kThink, kIdle
  };
  /// Whether a wait for `what` (a read on `c`) may begin or go on: no cut, or the peer's end of
  /// the step with something still to come for it (can_complete).
  [[nodiscard]] bool may_wait(Waiting what, const Connection* c = nullptr) const {
    return cut_ == CutReason::kNone || (cut_ == CutReason::kPeerEnded && can_complete(what, c));
  }
  /// The strand must stop where it is (a yield, a spin): cut, timed out or stopped. The peer's end
  /// of the step alone lets work that does not wait go on.
  [[nodiscard]] bool cut_short() const {
    return cut_ != CutReason::kNone && cut_ != CutReason::kPeerEnded;
  }
  /// After the peer's end of the step: whether a wait for `what` can still be satisfied. A TCP
  /// read, while the peer wrote bytes on its connection that this side has not read; a UDP read,
  /// always (a datagram in flight may still come; the quiet cut bounds it); an accept, while the
  /// peer made connections that have not been accepted; a think or a UDP connect's wait for its
  /// answer, always (each ends by itself).
  /// Never a write, connect or idle wait: the peer reads and accepts nothing more in this step.
  [[nodiscard]] bool can_complete(Waiting what, const Connection* c) const;
  /// Bytes the peer wrote on `c` in the step that this side has not read yet (0 before the peer
  /// ended the step).
  [[nodiscard]] std::uint64_t owed(const Connection& c) const;
  /// Marks the wait the strand enters (and, for a read, on which connection).
  void waits_for(Waiting what, Connection* c = nullptr) {
    waiting_ = what;
    reading_ = c;
  }
  /// At a step's release: the step's byte counts start at 0, and its random streams afresh.
  void begin_step();
  /// When the strand ends transaction `txn`: the TCP state of each of its open TCP connections
  /// joins the transaction's summary (results::SlotStats::tcp).
  void sample_tcp(const TxnPlan& txn);
  /// Each open TCP connection's TCP_INFO into `into`.
  void add_tcp_readings(stats::TcpSummary& into);
  /// At a step's end: hands the bytes written on each open connection to the worker, and per
  /// connection id the sum written on the ones closed during the step (kClosedSerial).
  void report_step_written();
  /// A connection is closed: its step's bytes join its id's sums (closed_).
  void note_closed(const Connection& c);
  /// After the peer's end of the step: bytes slave `from` wrote on connections of `id` that it
  /// did not list one by one (it closed them) and that this side has not read yet: its sum for
  /// them, less what this side read on its own closed and unlisted open connections of `id`
  /// with it.
  [[nodiscard]] std::uint64_t owed_unlisted(std::uint32_t id, std::uint32_t from,
                                            const std::vector<ConnectionBytes>& peer) const;
  /// Whether the peer listed `c` one by one among `peer`.
  [[nodiscard]] static bool listed(const Connection& c, const std::vector<ConnectionBytes>& peer);
  /// Moves the connections of `id` the peer made and this strand never accepted (its accept was
  /// cut) from the inbox to its connections, numbered as the peer numbered them.
  void adopt_inbox(std::uint32_t id);
  /// The drain of the connections of `id` the peer closed (its kClosedSerial entry `e`): reads
  /// what the candidates hold (this side's unlisted connections of `id`, and the ones the peer
  /// made that this strand never accepted, as they arrive) until owed_unlisted is 0 or `late`.
  /// The drain's wait for the connections the peer opened under `e.conn` (its kOpenedSerial
  /// entry `e`): until this strand has as many, adopting them from the inbox as they arrive, or
  /// `late`. Meanwhile those the peer closed are read to their end and closed (finish_unlisted).
  boost::asio::awaitable<std::optional<DrainShortfall>> await_opened(
      std::size_t txn, const ConnectionBytes& e, const std::vector<ConnectionBytes>& peer,
      std::span<char> buffer, const std::shared_ptr<bool>& late);
  /// Reads, without waiting, what this strand's connections of `id` with `from` that the peer did
  /// not list hold (their bytes are the step's: see drain_closed), and closes those at their end.
  /// Whether anything was read or closed.
  bool finish_unlisted(std::size_t txn, std::uint32_t id, std::uint32_t from,
                       const std::vector<ConnectionBytes>& peer, std::span<char> buffer);
  boost::asio::awaitable<std::optional<DrainShortfall>> drain_closed(
      std::size_t txn, const ConnectionBytes& e, const std::vector<ConnectionBytes>& peer,
      std::span<char> buffer, const std::shared_ptr<bool>& late);
  /// Whether this side's transaction `txn` has operations on connection `id` (a slave's mirror
  /// keeps only the operations of the connections it serves).
  [[nodiscard]] bool uses(std::size_t txn, std::uint32_t id) const;
  /// Serials this strand has given connections of `id` with slave `peer` so far.
  [[nodiscard]] std::uint32_t serials_used(std::uint32_t id, std::uint32_t peer) const;
  /// The drain's wait for what it cannot wait on directly (data on one of several connections,
  /// a connection on its way): a millisecond, cut short by a delivery of `id` or a cut.
  boost::asio::awaitable<void> tick(std::uint32_t id);
  /// Counts `n` drained bytes of connection `conn` as step `txn`'s bytes read.
  void count_drained(std::size_t txn, std::uint32_t conn, std::uint64_t n);
  std::uint32_t next_serial(std::uint32_t id, std::uint32_t peer);

  /// Every iteration of the transaction, each a pass over its flowops, in this one coroutine.
  boost::asio::awaitable<void> run_txn(const TxnPlan& txn);
  /// Counts what operation `op` came to, and records its latency (`from` to `done`) when timing.
  /// False when the strand must stop (the iteration is not counted).
  bool account_op(const TxnPlan& txn, const OpPlan& op, OpOutcome& out, Clock::time_point from,
                  Clock::time_point done, bool timing);
  /// account_op's most common case, an operation that went (the strand's loop calls it itself:
  /// account_op's other cases and eight arguments cost ~30 instructions an operation).
  void count_ok(const OpPlan& op, Clock::time_point from, Clock::time_point done, bool timing);
  /// Counts a whole iteration: `intended` is when it should have started (the pacing schedule),
  /// `started` when it did, `ended` when its last operation did.
  void account_iteration(const TxnPlan& txn, Clock::time_point intended, Clock::time_point started,
                         Clock::time_point ended, bool timing);
  /// The operation's timeout, if it has one on this side (a timer is armed for it).
  std::optional<std::chrono::nanoseconds> op_timeout(const OpPlan& op);
  bool needs_timer(const OpPlan& op);
  /// An operation with its timeout timer around it.
  boost::asio::awaitable<OpOutcome> execute(const OpPlan& op);
  /// A TCP read that must wait for the socket. Its caller co_awaits the connection's read itself
  /// (read_begin, read_wait, read_end) rather than a coroutine of the strand's: in a ping-pong
  /// every read waits, and a frame per read was an allocation per round trip.
  struct PendingRead {
    const OpPlan* op;
    Connection* c;
    std::uint64_t bytes;  ///< the flowop's
    std::uint64_t left;   ///< of those, still to read
    std::optional<std::uint64_t> chunk;
    bool ahead;  ///< asks for the whole buffer (see read_begin)
  };
  /// An operation begun: its outcome if it is already over, else what to co_await for it.
  using Started = std::variant<OpOutcome, boost::asio::awaitable<OpOutcome>, PendingRead>;
  /// The operation itself, without a timer.
  Started start(const OpPlan& op);
  boost::asio::awaitable<OpOutcome> do_connect(const OpPlan& op, const profile::ConnectOp& c);
  boost::asio::awaitable<OpOutcome> do_accept(const OpPlan& op, const profile::AcceptOp& a);
  /// A write flowop: its size drawn, then written at once if the socket takes it all.
  Started write(const OpPlan& op, const profile::WriteOp& w);
  /// A read flowop: its size drawn; a datagram already there is read at once.
  Started read(const OpPlan& op, const profile::ReadOp& r);
  /// What `begun` comes to (for a caller that is a coroutine anyway).
  boost::asio::awaitable<OpOutcome> finish(Started begun);
  /// Writes what the socket takes now, without waiting, of `left` (lowered by what was written).
  /// The outcome when the write is over (done or failed); nullopt when the rest must wait, for
  /// room (`blocked`) or for the worker's other strands (over budget).
  std::optional<OpOutcome> write_now(const OpPlan& op, Connection& c, std::uint64_t& left,
                                     std::optional<std::uint64_t> chunk, bool& blocked);
  /// Writes exactly `bytes` on the op's connection, at most `chunk` per system call; waits for
  /// room first if `wait_first` (write_now found none).
  boost::asio::awaitable<OpOutcome> send(const OpPlan& op, std::uint64_t bytes,
                                         std::optional<std::uint64_t> chunk, bool wait_first);
  /// Reads exactly `bytes` on the op's connection, at most `chunk` per system call: what the
  /// stash holds and (TCP) what the socket has now (read_now) at once, the rest as a PendingRead.
  Started receive(const OpPlan& op, std::uint64_t bytes, std::optional<std::uint64_t> chunk);
  /// The start of every read of `r`: what the stash holds, then (reading ahead) what the socket
  /// has now. The outcome when that was all of it, else nullopt: the rest must wait.
  std::optional<OpOutcome> begin_read(PendingRead& r);
  /// The connection of `op` when it is a plain stream operation (OpPlan::plain_stream) on an
  /// open TCP connection (run_txn begins those itself), else nullptr.
  Connection* tcp_stream(const OpPlan& op);
  /// Reads what a TCP connection has now, in place, towards `r` while data is there: no trip
  /// through the event loop (and its epoll_wait) per read while a bulk reader keeps finding data.
  /// The outcome when the read is over; nullopt when the rest must wait (the socket is drained)
  /// or give way to the worker's other strands (over budget).
  std::optional<OpOutcome> read_now(PendingRead& r);
  /// Before each read of `r`: the outcome when the strand was cut, else nullopt and `into`, the
  /// part of the worker's buffer to read into.
  std::optional<OpOutcome> read_begin(PendingRead& r, std::span<char>& into);
  transport::ReadAwaitable read_wait(PendingRead& r, std::span<char> into);
  /// After each read of `r`: the outcome when the operation is over, nullopt when more is to come.
  std::optional<OpOutcome> read_end(PendingRead& r, const boost::system::error_code& ec,
                                    std::size_t got);
  /// The whole of `r`, for a caller that is a coroutine anyway (execute, finish).
  boost::asio::awaitable<OpOutcome> read_rest(PendingRead r);
  /// Before a wait to read on `c`: the peer will send at least `bytes` more, so a TCP socket need
  /// not wake its reader before they are there (one wake-up per message, not per arrival; on
  /// loopback that is the sender's CPU: its send runs the receiver's wake-up).
  static void expect(Connection& c, std::uint64_t bytes);
  /// A TCP read of connection `c` completed and the strand resumes: it tells the strand whose read
  /// completed before it where its state lies, and prefetches its own successor's (see
  /// Successor). `frame` is an address in run_txn's frame.
  void resumed_after_read(Connection& c, transport::TcpConnection& tcp, const void* frame,
                          const transport::ReadResult& got);
  /// Consumes up to `most` stashed bytes of `c` (see Connection::stash); returns how many.
  static std::uint64_t take_stash(Connection& c, std::uint64_t most);
  enum class Direction { kRead, kWrite };
  // UDP (strand_datagram.cpp): one datagram per operation.
  boost::asio::awaitable<OpOutcome> connect_udp(const OpPlan& op, const profile::ConnectOp& c,
                                                const boost::asio::ip::address& address,
                                                std::uint16_t port,
                                                const transport::ConnectionHeader& who,
                                                std::uint32_t peer);
  /// One datagram written or read on `c` (a UDP connection): done here, without a coroutine
  /// frame, when the socket is ready (almost always for a write), else awaitable.
  Started datagram(const OpPlan& op, Connection& c, Direction direction, std::uint64_t bytes);
  /// The outcome when the datagram cannot be sent at all (its size, or the step is over).
  std::optional<OpOutcome> datagram_refused(Direction direction, std::uint64_t bytes);
  /// One try: the outcome, or nullopt when the socket would block (`blocked`) or when the
  /// strand must give way to the worker's others first (read on after duplicates).
  std::optional<OpOutcome> datagram_now(const OpPlan& op, Connection& c, Direction direction,
                                        std::uint64_t bytes, bool& blocked);
  /// What one try at a datagram came to (kGiveWay: read on after duplicates, once the worker's
  /// other strands had their turn).
  enum class DatagramTry { kDone, kBlocked, kGiveWay, kFailed };
  /// datagram_now without an OpOutcome: its error in `ec`. With `stamp_ns`, a write's send time
  /// is *stamp_ns (a clock read the caller has in hand) and a read's arrival time is stored
  /// there; without it each reads the clock itself.
  DatagramTry datagram_try(const OpPlan& op, Connection& c, Direction direction,
                           std::uint64_t bytes, std::uint64_t* stamp_ns,
                           boost::system::error_code& ec);
  /// A transaction whose every iteration is one datagram (its only flowop a UDP write, or a read
  /// without a timer, once each, unpaced): that flowop, else nullptr.
  const OpPlan* datagram_stream_op(const TxnPlan& txn);
  /// Runs iterations of such a transaction back to back, in place, from iteration `i` (begun at
  /// `from`, the run loop's checks passed), each counted and timed as run_txn would, while each
  /// datagram goes (or comes) at once. Returns with `i` and `from` at the iteration it stopped
  /// in: nullopt when that one is not begun (the run loop's checks say whether it runs; `i`
  /// unchanged when the connection is not UDP), else what its flowop began (it must wait, or it
  /// failed), for the run loop to finish and count.
  std::optional<Started> datagram_stream(const TxnPlan& txn, const OpPlan& op, std::uint64_t& i,
                                         std::uint64_t limit, Clock::time_point& from,
                                         bool timing);
  /// The rest of datagram(): waits (blocked) or yields, then tries again until done.
  boost::asio::awaitable<OpOutcome> datagram_later(const OpPlan& op, Direction direction,
                                                   std::uint64_t bytes, bool blocked);
  /// How long a UDP read waits for a datagram when the profile gives no timeout=.
  std::optional<std::chrono::nanoseconds> udp_read_timeout(const OpPlan& op);
  /// Waits until `link` is ready; nullopt when it is, else the outcome that ends the op.
  boost::asio::awaitable<std::optional<OpOutcome>> wait_ready(transport::AnyConnection& link,
                                                             transport::Wait what,
                                                             const char* op_name);
  boost::asio::awaitable<OpOutcome> do_sendfile(const OpPlan& op, std::uint64_t nfiles,
                                                std::optional<std::uint64_t> chunk);
  boost::asio::awaitable<OpOutcome> do_think(const profile::ThinkOp& t);
  /// Sleeps until `when`; false when cut or when the transaction's deadline came first. `what`:
  /// what the sleep is for, as the peer's end of the step sees it.
  boost::asio::awaitable<bool> sleep_until(Clock::time_point when,
                                           Waiting what = Waiting::kThink);
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
  /// A peer-closed or reset failure on a connection the slave closed at its header: reworded and
  /// counted as refused (see transport::closed_at_header).
  void refused_at_header(const OpPlan& op, OpOutcome& out);
  OpOutcome not_connected(const OpPlan& op);
  OpOutcome aborted_outcome();
  std::string where(const OpPlan& op) const;

  // What every operation touches first and together (two cache lines, not five: at thousands of
  // connections each is a miss per operation), what set-up and rare paths touch after.
  Worker& worker_;
  std::vector<Connection> connections_;  ///< oldest first; one id may have several (a pool)
  transport::AnyConnection* active_ = nullptr;  ///< the connection of the operation in progress
  CutReason cut_ = CutReason::kNone;
  bool failed_ = false;
  bool in_txn_ = false;
  std::uint32_t txn_slot_ = 0;
  /// At thousands of connections every round trip's state (the strand, its connection, its
  /// frame, the reactor's state for its socket) has left the cache by the time its answer comes,
  /// and each line is a miss (~28 a round trip per end: bench/callgrind_per_transaction.sh -x
  /// cachegrind). The order in which a worker's reads complete repeats round after round (97%
  /// of the time at 4,096 connections: the peer answers in the order it was asked), so each strand
  /// keeps where the state of the strand that came after it last time lies, and prefetches it
  /// when its own read completes: its own work (a system call or two) covers the fetch.
  struct Successor {
    const void* strand = nullptr;
    const void* connection = nullptr;
    const void* reactor_state = nullptr;
    const void* frame = nullptr;
    const void* read_op = nullptr;
    const void* entry_frame = nullptr;
  };
  Successor successor_;
  std::optional<Clock::time_point> deadline_;
  /// When the last operation of the last iteration ended, if nothing ran since (no yield): the
  /// next iteration starts then, without reading the clock again.
  std::optional<Clock::time_point> last_end_;
  std::uint64_t iteration_bytes_read_ = 0;
  std::uint64_t iteration_bytes_written_ = 0;
  std::uint64_t op_seq_ = 0;  ///< tells a late timeout from the operation it was armed for
  std::size_t txn_ = 0;
  std::size_t next_txn_ = 0;  ///< the first transaction this strand has not entered
  /// A cut for a transaction not entered yet (see cut()): which, and why.
  std::optional<std::pair<std::size_t, CutReason>> early_cut_;
  /// The peer's end of a step (peer_ended): which step, and what it wrote per connection in it.
  struct PeerEnd {
    std::size_t txn = 0;
    std::vector<ConnectionBytes> written;
  };
  std::optional<PeerEnd> peer_end_;
  Waiting waiting_ = Waiting::kNothing;
  Connection* reading_ = nullptr;  ///< the connection a kRead wait is on
  std::size_t group_;
  std::uint64_t index_;
  /// A connection accepted, not yet taken, and the slave it came from.
  struct Arrived {
    std::uint32_t peer = 0;
    transport::AnyConnection link;
  };
  /// Accepted, not yet taken, per connection id in the order they came.
  std::vector<std::pair<std::uint32_t, std::vector<Arrived>>> inbox_;
  std::optional<std::uint32_t> awaiting_conn_;  ///< accept waits for this connection
  boost::asio::steady_timer timer_;             ///< think, pacing and accept waits
  /// Per-flowop timeout=; made at the first operation that has one (a timer is 120 bytes, and
  /// most strands never need it).
  std::unique_ptr<boost::asio::steady_timer> op_timer_;
  std::vector<std::pair<std::uint32_t, RandomStream>> streams_;  ///< per connection id, lazily
  /// Serials used per connection id and slave: connections with one slave are numbered apart
  /// from those with another, as each slave numbers its own.
  struct Opened {
    std::uint32_t id = 0;
    std::uint32_t peer = 0;
    std::uint32_t used = 0;
    std::uint32_t at_step_start = 0;  ///< `used` when the current step began
  };
  std::vector<Opened> opened_;
  /// Per connection id and slave, the step's bytes on the connections closed during it.
  struct Closed {
    std::uint32_t id = 0;
    std::uint32_t peer = 0;
    std::uint64_t written = 0;
    std::uint64_t read = 0;
  };
  std::vector<Closed> closed_;
  /// Connects and accepts that failed (canfail let them pass) or were cut: a later "not open"
  /// says so.
  std::uint64_t failed_opens_ = 0;
};

}  // namespace volley::engine
