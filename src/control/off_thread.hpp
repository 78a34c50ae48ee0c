#pragma once
// Runs a blocking call (joining an engine's workers, running `tc`) on a helper thread while the
// calling coroutine waits without blocking its io_context: the control thread keeps answering
// pings, signals and other sessions meanwhile. The call must end by itself in bounded time (the
// engine's stop/finish and the snapshot's helpers do); the awaiting frame outlives the thread.
// Thread: awaited on `context`'s thread; `fn` runs on the helper.
#include <chrono>
#include <exception>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace volley::control {

template <class F>
boost::asio::awaitable<std::invoke_result_t<F>> run_off_thread(boost::asio::io_context& context,
                                                               F fn) {
  using T = std::invoke_result_t<F>;
  std::optional<T> result;
  std::exception_ptr error;
  bool done = false;
  boost::asio::steady_timer wake(context, std::chrono::steady_clock::time_point::max());
  std::thread helper([&] {
    try {
      result.emplace(fn());
    } catch (...) {
      error = std::current_exception();
    }
    boost::asio::post(context, [&] {
      done = true;
      wake.cancel();
    });
  });
  // `done` is set by the handler posted above, which runs while this coroutine waits.
  while (!done) {  // NOLINT(bugprone-infinite-loop)
    co_await wake.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  }
  helper.join();
  if (error) std::rethrow_exception(error);
  co_return std::move(*result);
}

}  // namespace volley::control
