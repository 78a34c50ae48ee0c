#pragma once
// A single-consumer event queue on one io_context: producers push (same thread), the consumer
// coroutine awaits the next event. It lets a session be written as a straight script that reacts
// to whatever comes first: a peer's message, a local engine event, a timer tick, a signal.
// Thread: the io_context it was built with (other threads post a push to it).
#include <chrono>
#include <deque>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace volley::control {

template <class Event>
class EventQueue {
 public:
  explicit EventQueue(boost::asio::io_context& context) : wake_(context) {}

  void push(Event e) {
    events_.push_back(std::move(e));
    wake_.cancel();
  }

  /// Events already pushed and not yet taken.
  [[nodiscard]] bool empty() const { return events_.empty(); }

  /// The next event, waiting for one if needed. One consumer only.
  boost::asio::awaitable<Event> next() {
    while (events_.empty()) {
      wake_.expires_at(std::chrono::steady_clock::time_point::max());
      co_await wake_.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    }
    Event e = std::move(events_.front());
    events_.pop_front();
    co_return e;
  }

 private:
  std::deque<Event> events_;
  boost::asio::steady_timer wake_;
};

}  // namespace volley::control
