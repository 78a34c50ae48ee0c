#pragma once
// The engine's side that only its workers and their strands use: the step barrier (each worker's
// end of a step, on_txn_done once all have ended it), what the workers hand over as a step ends
// (bytes written per connection, connects made), and what the strands ask about the peer's end of
// a step. The Engine owns it and drives it from its controlling thread (release, end_txn, the
// quiet cut); the workers call it from theirs. Thread: any (atomics; a lock around what the
// workers hand over).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "volley/engine/engine.hpp"
#include "volley/results/run_result.hpp"
#include "volley/engine/step_bytes.hpp"

namespace volley::engine {

class StepLedger {
 public:
  using Clock = std::chrono::steady_clock;
  using Connects = std::map<std::pair<const HostTarget*, std::uint16_t>, std::uint64_t>;

  /// `windows`: one per transaction, is_duration set. `stopped`: the engine's stop (no
  /// on_txn_done after it). `all_delivered`: called on a worker's thread when the last connection
  /// the peer said it made reaches its strand (Engine::end_txn's peer_connected).
  StepLedger(const EngineConfig& config, std::vector<results::TxnWindow> windows,
             const std::atomic<bool>& stopped, std::function<void()> all_delivered);

  // The workers (their threads).
  /// Every strand of one worker has finished transaction `txn`; the last worker ends the step.
  void worker_finished_txn(std::size_t txn);
  /// What a worker's strands wrote on each open connection in the step that ended.
  void add_step_written(std::vector<ConnectionBytes> written);
  /// A worker's connects of the step that ended, per target (a `targets` entry) and port.
  void add_step_connected(const Connects& counts);
  /// A worker put a TCP data connection in its strand's inbox.
  void tcp_delivered();
  /// After the peer ended a step with its count of connections: some it made have not been
  /// accepted yet (relaxed). Counted once a connection is in its strand's inbox (on the strand's
  /// worker), not when a listener routes it: a connection on its way to another worker is still
  /// outstanding.
  [[nodiscard]] bool accepts_outstanding() const {
    return delivered_tcp_.load(std::memory_order_relaxed) <
           peer_connected_now_.load(std::memory_order_relaxed);
  }
  /// Slave: the master has ended transaction `txn` (relaxed). A UDP sender stops then: its sends
  /// never block, so it would never fall quiet for the quiescence cut.
  [[nodiscard]] bool txn_ended(std::size_t txn) const {
    return ended_upto_.load(std::memory_order_relaxed) > txn;
  }

  // The engine (its controlling thread).
  /// Transaction `txn` is released to `workers` workers at `now`.
  void released(std::size_t txn, Clock::time_point now, std::size_t workers);
  /// The peer ended a step having established `n` TCP data connections to this engine.
  void set_peer_connected(std::uint64_t n) {
    peer_connected_now_.store(n, std::memory_order_relaxed);
  }
  /// end_txn(txn) was called.
  void ended(std::size_t txn);
  /// The quiet cut ended step `txn`: connections still missing are given up on.
  void quiet_cut(std::size_t txn);
  /// The step awaiting connections (see worker_finished_txn) is over: on_txn_done for it, once.
  void end_awaited_step();
  std::vector<ConnectionBytes> take_step_written();
  /// See Engine::connected() and Engine::connected_to_peer().
  [[nodiscard]] std::map<std::pair<std::string, std::uint16_t>, std::uint64_t> connected() const;
  [[nodiscard]] std::uint64_t connected_to_peer() const;
  /// Each transaction's window; complete once every worker is joined.
  [[nodiscard]] const std::vector<results::TxnWindow>& windows() const { return windows_; }

 private:
  const EngineConfig& config_;
  const std::atomic<bool>& stopped_;
  std::function<void()> all_delivered_;
  std::vector<Clock::time_point> release_times_;
  std::vector<results::TxnWindow> windows_;
  std::atomic<std::size_t> workers_pending_{0};
  std::atomic<std::size_t> ended_upto_{0};  ///< 1 + the last transaction end_txn() was called for
  /// The peer's count of connections for the workers' threads (accepts_outstanding), 0 before any
  /// end_txn() with a peer's written bytes.
  std::atomic<std::uint64_t> peer_connected_now_{0};
  std::atomic<std::uint64_t> delivered_tcp_{0};  ///< see accepts_outstanding
  /// 1 + a step every strand of this slave has ended while connections its master made were
  /// still on their way (0: none): its on_txn_done waits for them (end_awaited_step).
  std::atomic<std::size_t> awaiting_connections_{0};
  /// 1 + the last step the quiet cut ended (any thread).
  std::atomic<std::size_t> quiet_cut_upto_{0};
  mutable std::mutex mutex_;  ///< workers add at the end of a step, the engine takes
  std::vector<ConnectionBytes> step_written_;
  std::uint64_t connected_to_peer_ = 0;
  std::map<std::pair<std::string, std::uint16_t>, std::uint64_t> connected_;
};

}  // namespace volley::engine
