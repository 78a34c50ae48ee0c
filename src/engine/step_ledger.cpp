#include "step_ledger.hpp"

namespace volley::engine {

StepLedger::StepLedger(const EngineConfig& config, std::vector<results::TxnWindow> windows,
                       const std::atomic<bool>& stopped, std::function<void()> all_delivered)
    : config_(config),
      stopped_(stopped),
      all_delivered_(std::move(all_delivered)),
      release_times_(windows.size()),
      windows_(std::move(windows)) {}

void StepLedger::released(std::size_t txn, Clock::time_point now, std::size_t workers) {
  release_times_[txn] = now;
  windows_[txn].start_unix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
  workers_pending_.store(workers);
}

void StepLedger::worker_finished_txn(std::size_t txn) {
  if (stopped_) return;
  if (workers_pending_.fetch_sub(1) != 1) return;
  windows_[txn].elapsed =
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - release_times_[txn]);
  // A slave whose master ended the step with connections that have not reached a strand yet
  // (on their way through the listener) ends the step once they have (tcp_delivered) or once
  // the quiet cut gives up on them: the drain then adopts them into their strands' pools.
  if (config_.slave_side && txn_ended(txn) && accepts_outstanding()) {
    awaiting_connections_.store(txn + 1);
    if (!accepts_outstanding() || quiet_cut_upto_.load() > txn) end_awaited_step();
    return;
  }
  if (config_.on_txn_done) config_.on_txn_done(txn);
}

void StepLedger::end_awaited_step() {
  if (const std::size_t step = awaiting_connections_.exchange(0); step > 0) {
    if (config_.on_txn_done && !stopped_) config_.on_txn_done(step - 1);
  }
}

void StepLedger::ended(std::size_t txn) {
  if (ended_upto_.load(std::memory_order_relaxed) < txn + 1) {
    ended_upto_.store(txn + 1, std::memory_order_relaxed);
  }
}

void StepLedger::quiet_cut(std::size_t txn) {
  if (quiet_cut_upto_.load() < txn + 1) quiet_cut_upto_.store(txn + 1);
}

void StepLedger::tcp_delivered() {
  // The last connection a peer that ended its step made is in its strand's inbox: whoever still
  // waits to accept waits for nothing.
  if (delivered_tcp_.fetch_add(1, std::memory_order_relaxed) + 1 ==
      peer_connected_now_.load(std::memory_order_relaxed)) {
    all_delivered_();
    end_awaited_step();
  }
}

void StepLedger::add_step_written(std::vector<ConnectionBytes> written) {
  const std::lock_guard lock(mutex_);
  step_written_.insert(step_written_.end(), written.begin(), written.end());
}

void StepLedger::add_step_connected(const Connects& counts) {
  const std::lock_guard lock(mutex_);
  for (const auto& [key, n] : counts) {
    // By the host's name in `targets` (set before the start, so the pointers are stable); a
    // slave's connects back to its master are counted apart.
    if (config_.peer && key.first == &*config_.peer) connected_to_peer_ += n;
    for (const auto& [host, target] : config_.targets) {
      if (&target == key.first) connected_[{host, key.second}] += n;
    }
  }
}

std::vector<ConnectionBytes> StepLedger::take_step_written() {
  const std::lock_guard lock(mutex_);
  return std::exchange(step_written_, {});
}

std::map<std::pair<std::string, std::uint16_t>, std::uint64_t> StepLedger::connected() const {
  const std::lock_guard lock(mutex_);
  return connected_;
}

std::uint64_t StepLedger::connected_to_peer() const {
  const std::lock_guard lock(mutex_);
  return connected_to_peer_;
}

}  // namespace volley::engine
