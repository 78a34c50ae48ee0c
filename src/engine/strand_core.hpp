#pragma once
// A strand's state, shared by its script (Strand, strand.hpp: the flowop loop, timing, counting,
// step ends) and its protocols' executors (protocols.hpp), and the protocol-independent steps both
// use: waits and cuts, byte counts, the connection pool, draws from the random streams, outcomes.
// StrandCore owns every field; the executors hold no state of their own. Thread: worker-affine.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include "volley/engine/plan.hpp"
#include "volley/engine/random_stream.hpp"
#include "volley/engine/step_bytes.hpp"
#include "operation.hpp"
#include "protocols.hpp"
#include "worker.hpp"

namespace volley::engine {

/// One connection of a strand's pool. The counts, touched by every operation, come first and
/// together, ahead of the connection itself (whose socket state follows them): at thousands of
/// connections each line an operation touches is a cache miss
/// (bench/callgrind_per_transaction.sh -x cachegrind).
struct StrandConnection {
  StrandConnection(std::uint32_t conn_id, AnyConnection connection, std::uint32_t conn_serial = 0,
                   std::uint32_t conn_peer = 0)
      : id(conn_id), serial(conn_serial), peer(conn_peer), link(std::move(connection)) {}
  std::uint32_t id = 0;
  std::uint32_t serial = 0;  ///< see ConnectionBytes
  std::uint32_t peer = 0;    ///< see ConnectionBytes
  /// Bytes a read took from the socket beyond what its flowop wanted: the next reads' (and the
  /// step drain's) first. A count only: what was read is never looked at, so not kept.
  std::uint64_t stash = 0;
  std::uint64_t step_read = 0;     ///< bytes read on it in the current step
  std::uint64_t step_written = 0;  ///< bytes written on it in the current step
  AnyConnection link;
};

/// What the strand waits for, when it waits: what the peer's end of the step decides on.
/// kHello: a UDP connect's wait for the listener's answer, which the peer's listener sends
/// whether or not its strand still accepts. kHandshake: a TLS handshake's wait for the peer's
/// next flight (or a resuming client's for its session ticket), which the peer's TLS sends
/// whatever its strand does next: a server's handshake ends after the client's has, so the
/// client's side can end its step first.
enum class Waiting : std::uint8_t {
  kNothing,
  kRead,
  kWrite,
  kConnect,
  kHello,
  kHandshake,
  kAccept,
  kThink,
  kIdle
};

class StrandCore {
 public:
  using Clock = std::chrono::steady_clock;
  using Connection = StrandConnection;

  StrandCore(Worker& worker, std::size_t group, std::uint64_t index);

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
  /// After the peer's end of the step: whether a wait for `what` can still be satisfied. A read,
  /// while the peer wrote bytes on its connection that this side has not read, or always when
  /// they may be lost (a datagram in flight may still come; the quiet cut bounds it); an accept,
  /// while the peer made connections that have not been accepted; a think or a UDP connect's wait
  /// for its answer, always (each ends by itself).
  /// Never a write, connect or idle wait: the peer reads and accepts nothing more in this step.
  [[nodiscard]] bool can_complete(Waiting what, const Connection* c) const;
  /// Bytes the peer wrote on `c` in the step that this side has not read yet (0 before the peer
  /// ended the step).
  [[nodiscard]] std::uint64_t owed(const Connection& c) const;
  /// After the peer's end of the step: bytes slave `from` wrote on connections of `id` that it
  /// did not list one by one (it closed them) and that this side has not read yet: its sum for
  /// them, less what this side read on its own closed and unlisted open connections of `id`
  /// with it.
  [[nodiscard]] std::uint64_t owed_unlisted(std::uint32_t id, std::uint32_t from,
                                            const std::vector<ConnectionBytes>& peer) const;
  /// Whether the peer listed `c` one by one among `peer`.
  [[nodiscard]] static bool listed(const Connection& c, const std::vector<ConnectionBytes>& peer);
  /// Marks the wait the strand enters (and, for a read, on which connection).
  void waits_for(Waiting what, Connection* c = nullptr) {
    waiting_ = what;
    reading_ = c;
  }
  /// Cancels whatever the strand waits for now.
  void cancel_waits();
  /// Sleeps until `when`; false when cut or when the transaction's deadline came first. `what`:
  /// what the sleep is for, as the peer's end of the step sees it.
  boost::asio::awaitable<bool> sleep_until(Clock::time_point when, Waiting what = Waiting::kThink);
  /// sleep_until's halves, for a loop that awaits the timer itself (sleep_wait): begin_sleep sets
  /// the timer (false when the strand may not wait; `truncated`: cut to the deadline), end_sleep
  /// says what sleep_until would have.
  bool begin_sleep(Clock::time_point when, Waiting what, bool& truncated);
  bool end_sleep(Waiting what, bool truncated);
  /// The wait on the timer begin_sleep set, as a resuming operation (transport/resuming_io.hpp):
  /// the strand's coroutine waits with no frame of its own and no initiation frame, only the
  /// timer's operation. (A paced strand waits so between its iterations: at 200,000 connections
  /// sleep_until's frames and Asio's were several hundred bytes a connection.)
  transport::ResumingIo sleep_wait();
  /// Waits until `link` is ready; nullopt when it is, else the outcome that ends the op. `as`:
  /// what the wait is for, as the peer's end of the step sees it (by default a read or a write).
  boost::asio::awaitable<std::optional<OpOutcome>> wait_ready(
      AnyConnection& link, transport::Wait what, const char* op_name,
      std::optional<Waiting> as = std::nullopt);

  // Counters are looked up on every use, never held across a suspension: the worker swaps its
  // interval storage out between two resumptions of a strand.
  void add_read(const OpPlan& op, std::uint64_t n) {
    worker_.slot(op.slot).counters.bytes_read += n;
    worker_.slot(txn_slot_).counters.bytes_read += n;
    count_own_bytes(n);
  }
  void add_written(const OpPlan& op, std::uint64_t n) {
    worker_.slot(op.slot).counters.bytes_written += n;
    worker_.slot(txn_slot_).counters.bytes_written += n;
    count_own_bytes(n);
  }
  // This strand's own counts (EngineConfig::count_strands): asked of the worker, whose slots the
  // same count touches anyway, so that when off they cost a test of a flag in a hot line.
  void count_own_op() {
    if (worker_.counts_strands()) [[unlikely]]
      ++own_.ops;
  }
  void count_own_bytes(std::uint64_t n) {
    if (worker_.counts_strands()) [[unlikely]]
      own_.bytes += n;
  }
  void count_own_iteration() {
    if (worker_.counts_strands()) [[unlikely]]
      ++own_.transactions;
  }
  /// Consumes up to `most` stashed bytes of `c` (see Connection::stash); returns how many.
  static std::uint64_t take_stash(Connection& c, std::uint64_t most) {
    const std::uint64_t n = std::min(most, c.stash);
    c.stash -= n;
    return n;
  }

  /// The newest connection of `id` (each id is a pool: see strand_core.cpp), or nullptr.
  Connection* find(std::uint32_t id);
  /// Closes the newest connection of `id`.
  void close(std::uint32_t id);
  /// A connection is closed: its step's bytes join its id's sums (closed_).
  void note_closed(const Connection& c);
  /// The serial of the next connection of `id` with slave `peer`.
  std::uint32_t next_serial(std::uint32_t id, std::uint32_t peer);
  RandomStream& stream(std::uint32_t conn);
  std::uint64_t draw_size(const OpPlan& op, const profile::SizeSpec& size);
  std::size_t pick_file(const OpPlan& op, const FileSet& set);
  std::uint64_t draw_file_bytes(const OpPlan& op, std::uint64_t nfiles);

  OpOutcome failure_from(const boost::system::error_code& ec, const std::string& what);
  /// A peer-closed or reset failure on a connection the slave closed at its header: reworded and
  /// counted as refused (see transport::closed_at_header).
  void refused_at_header(const OpPlan& op, OpOutcome& out);
  OpOutcome not_connected(const OpPlan& op);
  OpOutcome aborted_outcome();

  /// At thousands of connections every round trip's state (the strand, its connection, its
  /// frame, the reactor's state for its socket) has left the cache by the time its answer comes,
  /// and each line is a miss (~28 a round trip per end: bench/callgrind_per_transaction.sh -x
  /// cachegrind). The order in which a worker's reads complete repeats round after round (97%
  /// of the time at 4,096 connections: the peer answers in the order it was asked), so each strand
  /// keeps where the state of the strand that came after it last time lies, and prefetches it
  /// when its own read completes: its own work (a system call or two) covers the fetch
  /// (prefetch_successor).
  struct Successor {
    const void* strand = nullptr;
    const void* connection = nullptr;
    const void* link_state = nullptr;  // the connection's event-loop state, if it has one
    const void* frame = nullptr;
    const void* read_op = nullptr;
    const void* entry_frame = nullptr;
  };

  // What every operation touches first and together (two cache lines, not five: at thousands of
  // connections each is a miss per operation), what set-up and rare paths touch after.
  Worker& worker_;
  std::vector<Connection> connections_;  ///< oldest first; one id may have several (a pool)
  AnyConnection* active_ = nullptr;      ///< the connection of the operation in progress
  CutReason cut_ = CutReason::kNone;
  std::uint32_t txn_slot_ = 0;
  Successor successor_;
  std::optional<Clock::time_point> deadline_;
  /// When the last operation of the last iteration ended, if nothing ran since (no yield): the
  /// next iteration starts then, without reading the clock again.
  std::optional<Clock::time_point> last_end_;
  std::size_t txn_ = 0;
  /// The peer's end of a step (Strand::peer_ended): which step, and what it wrote per connection.
  struct PeerEnd {
    std::size_t txn = 0;
    std::vector<ConnectionBytes> written;
  };
  std::optional<PeerEnd> peer_end_;
  Waiting waiting_ = Waiting::kNothing;
  Connection* reading_ = nullptr;  ///< the connection a kRead wait is on
  std::size_t group_;
  std::uint64_t index_;
  boost::asio::steady_timer timer_;  ///< think, pacing, connect-gate and accept waits
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
  /// TLS sessions to resume from (connects with `resume`), made at the first one kept.
  std::unique_ptr<transport::TlsSessions> tls_sessions_;
  results::StrandCounts own_;  ///< see count_own_op()
};

}  // namespace volley::engine
