#pragma once
// A read (or, on the io_uring engine, a send) as an operation a strand's coroutine co_awaits
// directly, its completion resuming the coroutine from the event loop's completion, with nothing
// in between. On the epoll engine the read is the drained read (drained_read.hpp).
//
// `co_await tcp.read(into)` with use_awaitable went: Asio's `initiate` coroutine frame (pushed on
// the awaitable thread, popped at completion), its result stored in that frame, the handler's
// work tracked through any_io_executor (handler_work: prefer, target checks) and the completion
// dispatched through it, an as_tuple wrapper around the handler. In a ping-pong every read waits,
// so all of it ran once per round trip on each end. Here the operation is an object Asio 1.81's
// awaitable accepts as an "async operation" (awaitable_frame_base::await_transform for
// is_async_operation): the coroutine suspends, the read is started with Asio's own
// awaitable_async_op_handler as its handler (the awaitable thread, moved), and on completion the
// reactor operation calls that handler in place, which resumes the coroutine (pump) with the
// result on its stack. No frame, no executor dispatch, no work count.
//
// Calling the handler in place is what Asio itself does for a handler whose executor is the
// io_context's own (handler_work::complete with nothing to track): this operation is only for a
// coroutine running on the socket's own io_context, on its one thread, which the strands are
// (co_spawned on their worker's context); the static_assert below keeps any other handler out.
// Asio's awaitable_async_op_handler is a detail of Boost 1.81's awaitable (impl/awaitable.hpp):
// pinned, with the rest, by drained_read.hpp's static_assert on the Boost version.
//
// A connection type offers the operation by a start function (ResumingIo::start): the TCP
// connection's queues a drained read on Asio's reactor (start_resuming_read below); the io_uring
// connection's a receive or a send in its ring (UringTcpConnection::read_resuming, send_resuming).
// The handler is one type, the coroutine's, so neither needs a template and the strand's loop one
// co_await. Thread: the socket's io_context's.
#include <cstddef>
#include <type_traits>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>

#include "volley/transport/drained_read.hpp"

namespace volley::transport {

/// What a resuming read or send came to: as async_read_some's (error, bytes), as one value, so the
/// coroutine gets it from co_await without an exception.
struct IoDone {
  boost::system::error_code ec;
  std::size_t bytes = 0;
  /// Where the read's state lay, for a prefetch of the coroutine's next read (see
  /// engine::StrandCore::Successor): the operation's memory (which the next read of the same
  /// coroutine gets back from Asio's per-thread cache) and the coroutine's entry frame.
  const void* op = nullptr;
  const void* entry_frame = nullptr;
};

/// The handler a strand's coroutine (boost::asio::awaitable<T>, any_io_executor) gives an
/// operation it co_awaits whose completion is void(IoDone). Calling it resumes the coroutine.
using ResumingHandler =
    boost::asio::detail::awaitable_async_op_handler<void(IoDone), boost::asio::any_io_executor>;

namespace resuming_detail {

namespace ad = boost::asio::detail;

/// drained_read.hpp's receive operation (a read that left nothing is "done and exhausted"),
/// completing by calling the coroutine's handler in place.
class ResumingRecvOp : public drained_detail::RecvOpBase {
 public:
  using Handler = ResumingHandler;
  BOOST_ASIO_DEFINE_HANDLER_PTR(ResumingRecvOp);

  ResumingRecvOp(ad::socket_type socket, drained_detail::State* state,
                 boost::asio::mutable_buffer buffer, DrainRule rule, Handler& handler)
      : RecvOpBase(socket, state, buffer, rule, &ResumingRecvOp::do_complete),
        handler_(std::move(handler)) {}

  static void do_complete(void* owner, ad::operation* base, const boost::system::error_code&,
                          std::size_t) {
    auto* o = static_cast<ResumingRecvOp*>(base);
    ptr p = {ad::addressof(o->handler_), o, o};
    // Out of the operation before its memory goes back to the per-thread cache, so that the
    // coroutine's next read finds the block there.
    Handler handler(std::move(o->handler_));
    const IoDone result{o->ec_, o->bytes_transferred_, o, handler.entry_point()};
    p.h = ad::addressof(handler);
    p.reset();
    // owner is null when the io_context is destroyed with the read queued: the handler's
    // destructor then unwinds the coroutine through its executor, as Asio's own operations do.
    if (owner != nullptr) handler(result);
  }

 private:
  Handler handler_;
};

}  // namespace resuming_detail

/// `IoDone r = co_await link.read_resuming(into);` inside a boost::asio::awaitable coroutine
/// that runs on the connection's io_context: reads into `buffer` what is there, waiting until
/// something is (or sends from it what the socket takes, waiting for room). cancel() on the
/// connection ends it with operation_aborted.
struct ResumingIo {
  /// Starts `io` with the coroutine's handler (taking it), to be called once it completes; never
  /// before start() returns.
  using Start = void (*)(const ResumingIo& io, ResumingHandler& handler);
  Start start = nullptr;
  void* connection = nullptr;  ///< what start() reads from or sends on
  boost::asio::mutable_buffer buffer;

  /// An asynchronous operation (Asio's is_async_operation): the coroutine's await_transform
  /// calls this with its own handler. (Constrained: await_transform also probes whether this is
  /// callable with the frame, which is no completion token.)
  template <class Token>
  requires boost::asio::completion_token_for<Token, void(IoDone)>
  auto operator()(Token&& token) const {
    return boost::asio::async_initiate<Token, void(IoDone)>(
        [this](auto handler) {
          static_assert(std::is_same_v<decltype(handler), ResumingHandler>,
                        "a resuming read calls its handler in place: only for a coroutine on the "
                        "connection's own io_context (co_await link.read_resuming(into))");
          start(*this, handler);
        },
        token);
  }
};

/// The drained read (as async_read_drained: no EAGAIN read, no epoll_ctl) of `socket` on
/// `reactor` as a resuming read's start.
inline void start_resuming_read(drained_detail::Socket& socket,
                                boost::asio::detail::reactor& reactor,
                                boost::asio::mutable_buffer buffer, DrainRule rule,
                                ResumingHandler& handler) {
  namespace ad = boost::asio::detail;
  using Op = resuming_detail::ResumingRecvOp;
  auto& impl = drained_detail::SocketAccess::implementation(socket);
  Op::ptr p = {ad::addressof(handler), Op::ptr::allocate(handler), nullptr};
  p.p = new (p.v) Op(impl.socket_, impl.reactor_data_, buffer, rule, handler);
  if (buffer.size() != 0 &&
      ((impl.state_ & ad::socket_ops::non_blocking) != 0 ||
       ad::socket_ops::set_internal_non_blocking(impl.socket_, impl.state_, true, p.p->ec_))) {
    reactor.start_op(ad::reactor::read_op, impl.socket_, impl.reactor_data_, p.p, false, true);
  } else {
    reactor.post_immediate_completion(p.p, false);
  }
  p.v = p.p = nullptr;
}

}  // namespace volley::transport
