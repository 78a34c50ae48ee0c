#pragma once
// How many of a worker's TCP connects may be between their connect() and their connection header
// at once. Without a bound, a step that opens thousands of connections at once starts every
// connect before it finishes any: the worker runs all the strands the step's release woke (each
// a connect() and an epoll_ctl) before its event loop sees the first handshake complete, so the
// first connections' headers leave seconds after the peer accepted them (the whole batch's
// start-up time, longer on a loaded host), and the peer's header deadline (volley serve
// --header-timeout, 5 s) closes them. With the gate a header leaves within the time of
// kConnectsInFlight connects. Thread: worker-affine.
#include <algorithm>
#include <cstddef>
#include <deque>

#include <boost/asio/steady_timer.hpp>

namespace volley::engine {

class ConnectGate {
 public:
  /// Well under the accepting side's header reads in flight per listener
  /// (transport::DataListener), and enough that connect rate with fewer strands is not touched.
  static constexpr std::size_t kConnectsInFlight = 128;

  /// Takes a slot if one is free.
  bool try_enter() {
    if (in_flight_ >= kConnectsInFlight) return false;
    ++in_flight_;
    return true;
  }
  /// Queues a strand for the next free slot: once the slot is the strand's, leave() sets
  /// `granted` and cancels `wake` (the strand waits on it with no expiry). The strand then holds
  /// the slot.
  void queue(boost::asio::steady_timer& wake, bool& granted) {
    granted = false;
    waiting_.push_back({&wake, &granted});
  }
  /// A queued strand that gives up (cut or stopped) before its slot came. Linear, and rare.
  void forget(const boost::asio::steady_timer& wake) {
    const auto it = std::find_if(waiting_.begin(), waiting_.end(),
                                 [&wake](const Waiter& w) { return w.wake == &wake; });
    if (it != waiting_.end()) waiting_.erase(it);
  }
  /// A slot's connect is over (header written, or failed): the slot goes to the longest waiting
  /// strand, or is free.
  void leave() {
    if (waiting_.empty()) {
      if (in_flight_ > 0) --in_flight_;
      return;
    }
    const Waiter next = waiting_.front();
    waiting_.pop_front();
    *next.granted = true;
    next.wake->cancel();
  }
  [[nodiscard]] std::size_t in_flight() const { return in_flight_; }
  [[nodiscard]] std::size_t waiting() const { return waiting_.size(); }

 private:
  struct Waiter {
    boost::asio::steady_timer* wake;
    bool* granted;
  };
  std::size_t in_flight_ = 0;
  std::deque<Waiter> waiting_;
};

}  // namespace volley::engine
