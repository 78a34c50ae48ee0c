#pragma once
// A worker: one OS thread, one io_context, the strands placed on it, and their statistics.
// Everything here is worker-affine except the post_* entry points, progress() and join().
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <thread>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "volley/engine/engine.hpp"
#include "volley/results/slot_stats.hpp"
#include "volley/transport/ring.hpp"
#include "volley/engine/step_bytes.hpp"
#include "connect_gate.hpp"
#include "protocols.hpp"
#include "zero_copy_buffer.hpp"

namespace volley::engine {

class StepLedger;
class Strand;
class StrandCore;

/// Why a strand's pending operation was cancelled, in rising order of force.
/// kPeerEnded: the peer has ended the step (a slave's strands, at the master's end_step). The
/// strand finishes what can still complete (reads of bytes the peer wrote and this side has not
/// read yet, accepts of connections the peer made and this side has not taken, thinks, the
/// iterations of an iterations-bound step) and ends every wait that nothing can complete; it starts
/// no new iteration of a duration-bound step. See docs/architecture.md, "The end of a step".
enum class CutReason { kNone, kTimeout, kPeerEnded, kEnded, kStopped };

class Worker {
 public:
  using Clock = std::chrono::steady_clock;
  /// Operations or system calls a strand may run without suspending before it yields. Large
  /// enough that yielding (a trip through the event loop, a few us) is amortised over many
  /// operations; small enough that a cut, a ping or an interval sample waits tens of
  /// microseconds, not the rest of a step.
  static constexpr std::uint32_t kYieldBudget = 64;

  Worker(Engine& engine, StepLedger& ledger);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  boost::asio::io_context& context() { return context_; }
  /// The worker's io_uring (the io_uring engine), once its thread runs; else null.
  transport::Ring* ring() { return ring_.get(); }
  /// Before start(): places strand `strand` of group `group` here; returns its local index.
  std::uint32_t add_strand(std::size_t group, std::uint64_t strand);
  [[nodiscard]] std::size_t strand_count() const { return strands_.size(); }

  void start();
  void join();

  // Cross-thread entry points: each posts to this worker.
  void post_release(std::size_t txn, Clock::time_point start);
  void post_cut(std::size_t txn, CutReason reason);
  /// The peer ended step `txn`: what it wrote there per connection of this worker's strands
  /// (pairs of local strand index and entry); every strand is told (Strand::peer_ended).
  void post_peer_ended(std::size_t txn,
                       std::vector<std::pair<std::uint32_t, ConnectionBytes>> peer_written);
  /// Every connection the peer made has been accepted: strands still waiting to accept after the
  /// peer's end of the step wait for nothing (Strand::recheck_peer_end).
  void post_recheck_peer_end();
  void post_stop();
  /// Worker-affine: hands a connection accepted on this worker's thread to local strand `local`
  /// (connection `conn` of the strand, from slave `peer`: see EngineConfig::peers).
  void deliver(std::uint32_t local, std::uint32_t conn, std::uint32_t peer, AnyConnection link);
  /// Hands an accepted connection (a native descriptor, now owned by this worker) to a strand.
  void post_deliver(std::uint32_t local, std::uint32_t conn, std::uint32_t peer,
                    boost::asio::ip::tcp protocol, int fd);
  /// The same for a UDP connection (a connected UDP socket).
  void post_deliver_udp(std::uint32_t local, std::uint32_t conn, std::uint32_t peer,
                        boost::asio::ip::udp protocol, int fd);
  /// Between steps (src/engine/step_drain.cpp): each strand drains its connections in
  /// `peer_written` (pairs of local strand index and connection) until `deadline`; `deliver` then
  /// runs on this thread with what all of them found (at once when the thread is not running).
  void post_drain(std::size_t txn,
                  std::vector<std::pair<std::uint32_t, ConnectionBytes>> peer_written,
                  Clock::time_point deadline, std::function<void(DrainOutcome)> deliver);
  /// Swaps this worker's interval counters out on its own thread and hands them to `deliver`
  /// there (at once when the thread is not running).
  void post_take_interval(std::function<void(std::vector<results::SlotStats>)> deliver);

  [[nodiscard]] std::uint64_t progress() const { return progress_.load(std::memory_order_relaxed); }
  /// Whether the worker's thread is runnable now (running, or ready and waiting for a CPU), by
  /// the kernel's own account of it (/proc/self/task/TID/stat): a thread blocked in epoll_wait is
  /// not. False when it cannot tell (thread not started, /proc unreadable). Any thread.
  [[nodiscard]] bool runnable() const;
  [[nodiscard]] bool thinking() const { return thinking_.load(std::memory_order_relaxed) > 0; }
  /// Around a think: a thinking strand is not stuck, so quiescence does not cut it.
  void think_begins() { thinking_.fetch_add(1, std::memory_order_relaxed); }
  void think_ends() { thinking_.fetch_sub(1, std::memory_order_relaxed); }
  /// Some strand waits for a connection to be accepted: quiescence gives it longer.
  [[nodiscard]] bool accepting() const { return accepting_.load(std::memory_order_relaxed) > 0; }
  void accept_wait_begins() { accepting_.fetch_add(1, std::memory_order_relaxed); }
  void accept_wait_ends() { accepting_.fetch_sub(1, std::memory_order_relaxed); }
  /// Every strand still inside the released step waits in an accept (none waits for data).
  [[nodiscard]] bool only_accepting() const {
    return unfinished_.load(std::memory_order_relaxed) ==
           accepting_.load(std::memory_order_relaxed);
  }

  // Worker-affine, used by strands.
  Engine& engine() { return engine_; }
  StepLedger& ledger() { return ledger_; }
  const Plan& plan() const { return engine_.plan(); }
  boost::asio::awaitable<void> wait_release(std::size_t txn);
  void strand_done(std::size_t txn);
  [[nodiscard]] bool stopping() const { return stopping_; }
  [[nodiscard]] Clock::time_point txn_start() const { return txn_start_; }
  std::span<char> buffer() { return buffer_; }
  /// What zero-copy writes send (see ZeroCopyBuffer), as large as buffer(), mapped at the first
  /// call; empty when it could not be.
  std::span<const char> zero_copy_buffer();
  /// What this worker's strands wrote on each open connection in the step now ending.
  std::vector<ConnectionBytes>& step_written() { return step_written_; }
  results::SlotStats& slot(std::uint32_t id) { return interval_[id]; }
  /// EngineConfig::count_strands, kept beside the slots every operation touches.
  [[nodiscard]] bool counts_strands() const { return counts_strands_; }
  /// An operation or a system call completed: what a slave's quiescence watches.
  /// The strand whose read completed last on this worker, replaced by `s`
  /// (see StrandCore::Successor).
  StrandCore* exchange_last_resumed(StrandCore* s) { return std::exchange(last_resumed_, s); }
  void count_progress() { progress_.store(progress_local_ += 1, std::memory_order_relaxed); }
  /// Counts one unit of inline work (an operation, a system call); true when the strand running
  /// now has used the worker's budget and must give way with yield(). A compare, no clock read.
  bool over_budget() { return ++inline_work_ >= kYieldBudget; }
  /// over_budget() for `units` operations done at once (a batch of datagrams).
  bool over_budget(std::uint32_t units) { return (inline_work_ += units) >= kYieldBudget; }
  /// The event loop is about to run other work (a strand suspends): the budget starts again.
  void budget_renewed() { inline_work_ = 0; }
  /// Lets every other ready strand, I/O completion, cut and interval request run, then resumes.
  boost::asio::awaitable<void> yield();
  void count_connection(bool established);
  /// A strand's TCP connect to `target` (an entry of the engine's targets, or its peer) at
  /// `port` succeeded: the peer is told at the end of the step (Engine::connected()).
  void count_connected(const HostTarget* target, std::uint16_t port) {
    ++step_connected_[{target, port}];
  }
  ConnectGate& connect_gate() { return connect_gate_; }
  /// Keeps the first errors; `stopped`: the error stopped its strand (kept even past the limit
  /// when it is this worker's first such, so the run's failure can name it).
  void note_error(std::string where, std::string message, bool stopped = false);

  /// Results gathered on this worker; call after join().
  std::vector<results::SlotStats> take_totals();
  std::uint64_t connections_requested() const { return connections_requested_; }
  std::uint64_t connections_established() const { return connections_established_; }
  std::uint64_t failed_strands() const;
  /// Local strand `local`'s own counts (EngineConfig::count_strands); call after join().
  [[nodiscard]] const results::StrandCounts& strand_counts(std::uint32_t local) const;
  std::vector<results::ErrorSample>& error_samples() { return error_samples_; }

 private:
  /// The drain after a duration deadline: cut at `at` unless operations completed since
  /// `progress_at_arm`, then look again one drain_grace later, until `limit`.
  void arm_drain(std::size_t txn, Clock::time_point at, Clock::time_point limit,
                 std::uint64_t progress_at_arm);
  void on_release(std::size_t txn, Clock::time_point start);
  void arm_cut_timer(std::size_t txn);
  void cut(std::size_t txn, CutReason reason);
  void fold_interval();
  /// On the worker's thread, before its loop: the ring of the io_uring engine.
  void open_ring();

  Engine& engine_;
  StepLedger& ledger_;
  // First: destroyed last, after every strand. One thread, and no lock around a socket's reactor
  // state (UNSAFE_IO; the scheduler's queue and the reactor's registration and timers stay
  // locked, for the post_* entry points): every socket of this context is used only before the
  // thread starts (listeners), on it, or after join() (close_all). The descriptor's mutex was
  // three lock/unlock pairs per ping-pong round trip on each end (reactor completion, read_now,
  // queuing the read): about 360 of ~2,000 user-space instructions.
  boost::asio::io_context context_{BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO};
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> guard_;
  /// Set up on the worker's thread and shut down there (one issuer); destroyed after the strands,
  /// whose connections close through it.
  std::unique_ptr<transport::Ring> ring_;
  std::thread thread_;
  std::atomic<int> tid_{0};  ///< the thread's kernel id, once it runs (runnable())
  std::vector<std::unique_ptr<Strand>> strands_;
  StrandCore* last_resumed_ = nullptr;        ///< see exchange_last_resumed
  std::vector<results::SlotStats> interval_;  ///< recorded into by strands
  bool counts_strands_ = false;
  std::vector<results::SlotStats> totals_;  ///< interval_ is folded in at every take
  std::vector<char> buffer_;
  std::unique_ptr<ZeroCopyBuffer> zero_copy_buffer_;
  boost::asio::steady_timer release_timer_;
  boost::asio::steady_timer cut_timer_;
  std::size_t released_ = 0;  ///< transactions released: strands may run txn < released_
  std::size_t done_in_txn_ = 0;
  /// strands_.size() - done_in_txn_, readable from the controlling thread (only_accepting()).
  std::atomic<std::size_t> unfinished_{0};
  Clock::time_point txn_start_{};
  bool stopping_ = false;
  std::atomic<std::uint64_t> progress_{0};
  std::atomic<std::uint32_t> thinking_{0};
  std::atomic<std::uint32_t> accepting_{0};
  std::uint64_t progress_local_ = 0;
  std::uint32_t inline_work_ = 0;
  std::uint64_t connections_requested_ = 0;
  std::uint64_t connections_established_ = 0;
  std::vector<results::ErrorSample> error_samples_;
  std::vector<ConnectionBytes> step_written_;
  /// This step's successful TCP connects per target and port (a handful of keys: one per
  /// listener of the peer's this worker's strands connect to).
  std::map<std::pair<const HostTarget*, std::uint16_t>, std::uint64_t> step_connected_;
  ConnectGate connect_gate_;
};

}  // namespace volley::engine
