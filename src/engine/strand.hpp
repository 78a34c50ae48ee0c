#pragma once
// A strand: one of a group's N identical flows (uperf's "thread"), run as a coroutine on its
// worker. Strand is its script, whatever the protocol: the transactions in order, each a loop of
// iterations over its flowops, with their pacing, timing and counting, and the step's end (cuts,
// the peer's end of the step, the drain). What a flowop does on a connection is its protocol's
// executor's (protocols.hpp); the state both share is StrandCore's. Its state is explicit (which
// transaction, which connections, why it was cut) so that the worker can end or cancel it and
// tests can reason about it. Thread: worker-affine.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include "op_run.hpp"
#include "paced_schedule.hpp"
#include "strand_core.hpp"

namespace volley::engine {

class Strand : private StrandCore {
 public:
  Strand(Worker& worker, std::size_t group, std::uint64_t index);

  /// The whole life of the strand: every transaction in order, waiting at each barrier.
  boost::asio::awaitable<void> run();

  /// A connection slave `peer` (0 on a slave: its master) opened for connection `conn` has
  /// arrived.
  void deliver(std::uint32_t conn, std::uint32_t peer, AnyConnection link);
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
  /// This strand's own counts (EngineConfig::count_strands; zero when not counted).
  [[nodiscard]] const results::StrandCounts& own_counts() const { return own_; }
  /// Between steps, before the drain (see Worker::post_drain): every connection the peer made
  /// that this strand never accepted joins its pool, numbered as the peer numbered it.
  void adopt_inbox();
  /// Closes every connection the profile left open; only once run() has ended.
  void close_all();
  /// Between steps (src/engine/step_drain.cpp): reads, on each connection in `peer_written`,
  /// until this side has read all the peer wrote on it during step `txn`, or `deadline`.
  boost::asio::awaitable<DrainOutcome> drain(std::size_t txn,
                                             std::vector<ConnectionBytes> peer_written,
                                             Clock::time_point deadline, std::span<char> buffer);
  /// The drain when there is nothing to do: every entry of `peer_written` (step `txn`'s) names an
  /// open connection of this strand on which it has read all the peer wrote (bytes a read took
  /// ahead of its flowop included), or a count of connections opened that this strand has all
  /// of (kOpenedSerial). Then adds them to `read_exactly` and returns true, and no
  /// drain coroutine is needed (a paced step ends with nearly every connection so); else returns
  /// false and changes nothing that drain() would not.
  bool level_already(std::size_t txn, const std::vector<ConnectionBytes>& peer_written,
                     std::uint64_t& read_exactly);

 private:
  /// At a step's release: the step's byte counts start at 0, and its random streams afresh.
  void begin_step();
  /// When the strand ends transaction `txn`: the TCP state of each of its open TCP connections
  /// joins the transaction's summary (results::SlotStats::tcp).
  void sample_tcp(const TxnPlan& txn);
  /// Each open connection's TCP_INFO into `into` (the protocols that have one).
  void add_tcp_readings(stats::TcpSummary& into);
  /// At a step's end: hands the bytes written on each open connection to the worker, and per
  /// connection id the sum written on the ones closed during the step (kClosedSerial).
  void report_step_written();
  /// Moves the connections of `id` the peer made and this strand never accepted (its accept was
  /// cut) from the inbox to its connections, numbered as the peer numbered them.
  void adopt_inbox(std::uint32_t id);
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
  /// The drain of the connections of `id` the peer closed (its kClosedSerial entry `e`): reads
  /// what the candidates hold (this side's unlisted connections of `id`, and the ones the peer
  /// made that this strand never accepted, as they arrive) until owed_unlisted is 0 or `late`.
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

  /// At step `t`'s release: whether this strand runs its transaction (then inside it).
  bool enter_step(std::size_t t);
  /// At step `t`'s end, whether this strand ran it or not.
  void end_step(std::size_t t);
  /// How run() loops over a transaction: what begin_txn found once, at its start.
  struct TxnLoop {
    Clock::time_point start;                ///< the step's release
    std::uint64_t limit = 0;                ///< iterations (a duration's: no limit)
    std::optional<PacedSchedule> schedule;  ///< paced (the master's side): intended starts
    const OpPlan* bursting = nullptr;       ///< see burst_op
    bool duration = false;                  ///< bound by a duration, not iterations
    bool idle = false;    ///< a slave's mirror with nothing to answer: waits for the step's end
    bool timing = false;  ///< latencies are recorded
  };
  /// A transaction's start: its deadline, its slot and how to loop over it.
  TxnLoop begin_txn(const TxnPlan& txn);
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
  /// A read's timeout when the flowop has none: its connection's protocol's (kReadTimeout).
  std::optional<std::chrono::nanoseconds> default_timeout(const OpPlan& op);
  /// An operation with its timeout timer around it.
  boost::asio::awaitable<OpOutcome> execute(const OpPlan& op);
  /// The steps of one operation of run()'s loop (op_run.hpp), none of them a coroutine: each
  /// leaves in `run` what the loop waits for next, and returns which kind of wait that is.
  /// begin_op begins `op` (the loop's checks passed); resume_op goes on after the wait `waited`
  /// completed with `got` (not kOutcome: that one's outcome is the operation's). `frame`: an
  /// address in the loop's coroutine frame (for StreamOps::resumed and ring_sent).
  OpAwait begin_op(OpRun& run, const OpPlan& op);
  OpAwait resume_op(OpRun& run, OpAwait waited, const transport::IoDone& got, const void* frame);
  /// A write of `bytes` on the plain stream `c`: through the ring, or written now, or a send().
  OpAwait begin_write(OpRun& run, const OpPlan& op, Connection& c, std::uint64_t bytes);
  /// The first wait of run.read: on a connection without a resuming read, the read's own
  /// coroutine (StreamOps::read_rest); else next_read.
  OpAwait first_wait(OpRun& run);
  /// The next resuming read of run.read (read_begin), or its end.
  OpAwait next_read(OpRun& run);
  /// An operation start() (or a burst) began, taken into `run`.
  OpAwait take_started(OpRun& run, Started begun);
  /// A burst (burst()) taken into `run`: the wait of the operation it began, if it began one.
  std::optional<OpAwait> run_burst(OpRun& run, const TxnPlan& txn, const OpPlan& op,
                                   std::uint64_t& i, std::uint64_t limit, Clock::time_point& from,
                                   bool timing);
  /// The operation itself, without a timer. Not a coroutine: an operation that is over without
  /// waiting (most writes, disconnect, nop) is done here and costs no coroutine frame; the others
  /// return their own awaitable (lazy, started by the caller's co_await).
  Started start(const OpPlan& op);
  Started do_connect(const OpPlan& op, const profile::ConnectOp& c);
  boost::asio::awaitable<OpOutcome> do_accept(const OpPlan& op, const profile::AcceptOp& a);
  /// `bytes` written (read) on the op's connection, by its protocol's executor.
  Started write(const OpPlan& op, std::uint64_t bytes, std::optional<std::uint64_t> chunk);
  Started read(const OpPlan& op, std::uint64_t bytes, std::optional<std::uint64_t> chunk);
  Started sendfile(const OpPlan& op, std::uint64_t nfiles, std::optional<std::uint64_t> chunk);
  /// The connection of `op` when it is a plain stream operation (OpPlan::plain_stream) on an
  /// open byte-stream connection (run() begins those itself), else nullptr.
  Connection* plain_stream(const OpPlan& op);
  /// A transaction whose every iteration is one flowop (a write, or a read without a timer, once
  /// each, unpaced) on a connection whose protocol runs such iterations in place (bursts): that
  /// flowop, else nullptr.
  const OpPlan* burst_op(const TxnPlan& txn);
  /// The protocol's burst (see UdpOps::burst) from iteration `i`; nullopt with `i` unchanged when
  /// the op's connection does not burst.
  std::optional<Started> burst(const TxnPlan& txn, const OpPlan& op, std::uint64_t& i,
                               std::uint64_t limit, Clock::time_point& from, bool timing);
  boost::asio::awaitable<OpOutcome> do_think(const profile::ThinkOp& t);
  std::string where(const OpPlan& op) const;

  bool failed_ = false;
  bool in_txn_ = false;
  std::uint64_t op_seq_ = 0;  ///< tells a late timeout from the operation it was armed for
  std::size_t next_txn_ = 0;  ///< the first transaction this strand has not entered
  /// A cut for a transaction not entered yet (see cut()): which, and why.
  std::optional<std::pair<std::size_t, CutReason>> early_cut_;
  /// A connection accepted, not yet taken, and the slave it came from.
  struct Arrived {
    std::uint32_t peer = 0;
    AnyConnection link;
  };
  /// Accepted, not yet taken, per connection id in the order they came.
  std::vector<std::pair<std::uint32_t, std::vector<Arrived>>> inbox_;
  std::optional<std::uint32_t> awaiting_conn_;  ///< accept waits for this connection
  /// Per-flowop timeout=; made at the first operation that has one (a timer is 120 bytes, and
  /// most strands never need it).
  std::unique_ptr<boost::asio::steady_timer> op_timer_;
};

}  // namespace volley::engine
