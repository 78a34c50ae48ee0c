#pragma once
// A stream socket read through Asio's reactor that tells the reactor when it drained the socket.
//
// Asio 1.81's own async_read_some marks a read "exhausted" only when it returns 0 bytes, so after
// every epoll edge its next read is tried at once: in a ping-pong (write, then read the answer)
// that read fails with EAGAIN, one wasted system call per round trip on each end. This read
// reports itself exhausted when the kernel says nothing is left to read: with TCP_INQ on
// (enable_inq), each recvmsg returns the bytes still queued after it, and 1 when only the peer's
// FIN is, since a read must still see the end of the stream. A short read alone does not tell:
// data and a FIN that came together leave a short read and then no further edge, and a read that
// waited for one would wait forever (test WakeAfter.EndOfStream*, DrainedRead.DataAndTheEnd*).
// Then the reactor clears its "try speculatively" flag under the descriptor's mutex, in the same
// critical section as the recv, and the next read is queued without a system call until epoll's
// next edge (data that arrives after the recv raises a new edge, so none is missed). Queuing a
// read costs no epoll_ctl (unlike async_wait, which re-arms the descriptor). A full read with
// nothing left is exhausted too: a stream reader is spared the read that would fail with EAGAIN.
//
// This reaches into Asio's detail namespace (reactor_op, the reactor's start_op, the socket's
// implementation): pinned to Boost 1.81's epoll reactor by the static_assert below, and covered by
// the engine's StrandIo and integration tests and by bench/callgrind_per_transaction.sh -x strace.
// Thread: the socket's io_context's.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/detail/handler_alloc_helpers.hpp>
#include <boost/asio/detail/conditionally_enabled_mutex.hpp>
#include <boost/asio/detail/handler_work.hpp>
#include <boost/asio/detail/reactor.hpp>
#include <boost/asio/detail/reactor_op.hpp>
#include <boost/asio/detail/socket_ops.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/version.hpp>

static_assert(BOOST_VERSION / 100 == 1081,
              "drained_read.hpp uses Asio 1.81 internals: check reactive_socket_recv_op.hpp and "
              "epoll_reactor::start_op of this Boost before changing the version");

static_assert(std::is_same_v<boost::asio::detail::reactor, boost::asio::detail::epoll_reactor>,
              "drained_read.hpp knows Asio's epoll reactor only");

namespace volley::transport {

/// Asks the kernel to say, with each read of TCP socket `fd`, what is left to read (TCP_INQ);
/// false if it cannot (then a short read is taken as "drained", which misses a pending FIN).
inline bool enable_inq(int fd) {
  const int on = 1;
  return ::setsockopt(fd, IPPROTO_TCP, TCP_INQ, &on, sizeof on) == 0;
}

/// What one non-blocking read of a TCP socket did.
struct Received {
  boost::system::error_code ec;  ///< would_block: nothing was there; eof: the end of the stream
  std::size_t bytes = 0;
  bool drained = false;  ///< nothing is left to read: the next read must wait for epoll's edge
};

/// One recvmsg(2) of TCP socket `fd` into `data`, without waiting, with what is left (TCP_INQ's
/// count when enable_inq() took, else "drained" if the read came back short).
inline Received receive_once(int fd, void* data, std::size_t size) {
  Received r;
  iovec iov{data, size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = 0;
  do {
    n = ::recvmsg(fd, &msg, MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    r.ec = errno == EAGAIN || errno == EWOULDBLOCK
               ? boost::system::error_code(boost::asio::error::would_block)
               : boost::system::error_code(errno, boost::asio::error::get_system_category());
    r.drained = true;
    return r;
  }
  r.bytes = static_cast<std::size_t>(n);
  if (n == 0 && size > 0) {
    r.ec = boost::asio::error::eof;
    r.drained = true;
    return r;
  }
  r.drained = r.bytes < size;  // without TCP_INQ's count
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == IPPROTO_TCP && c->cmsg_type == TCP_CM_INQ) {
      int left = 0;
      std::memcpy(&left, CMSG_DATA(c), sizeof left);
      r.drained = left == 0;
    }
  }
  return r;
}

namespace drained_detail {

namespace ad = boost::asio::detail;
using Socket = boost::asio::ip::tcp::socket;
using State = ad::epoll_reactor::descriptor_state;

/// The reactor's per-descriptor fields read_now() needs, which descriptor_state keeps private:
/// named through an explicit instantiation (where C++ does not check access), which defines a
/// friend function returning the pointer to member.
template <class Tag, typename Tag::type Member>
struct Grant {
  friend constexpr typename Tag::type member(Tag) { return Member; }
};
struct MutexOf {
  using type = ad::conditionally_enabled_mutex State::*;
  friend constexpr type member(MutexOf);
};
struct EventsOf {
  using type = std::uint32_t State::*;
  friend constexpr type member(EventsOf);
};
struct QueuesOf {
  using type = ad::op_queue<ad::reactor_op> (State::*)[ad::epoll_reactor::max_ops];
  friend constexpr type member(QueuesOf);
};
struct SpeculativeOf {
  using type = bool (State::*)[ad::epoll_reactor::max_ops];
  friend constexpr type member(SpeculativeOf);
};
template struct Grant<MutexOf, &State::mutex_>;
template struct Grant<EventsOf, &State::registered_events_>;
template struct Grant<QueuesOf, &State::op_queue_>;
template struct Grant<SpeculativeOf, &State::try_speculative_>;

/// The socket's reactor-side state (descriptor, flags, per-descriptor data), which basic_socket
/// keeps protected: reached through a pointer to member named in a derived class, which C++
/// allows.
struct SocketAccess : Socket {
  static auto& implementation(Socket& s) {
    return (s.*(&SocketAccess::impl_)).get_implementation();
  }
};

/// reactive_socket_recv_op for one buffer, except that a read that left nothing (receive_once's
/// `drained`) is "done and exhausted".
class RecvOpBase : public ad::reactor_op {
 public:
  RecvOpBase(ad::socket_type socket, boost::asio::mutable_buffer buffer,
             func_type complete_func)
      : ad::reactor_op(boost::system::error_code(), &RecvOpBase::do_perform, complete_func),
        socket_(socket),
        buffer_(buffer) {}

  static status do_perform(ad::reactor_op* base) {
    auto* o = static_cast<RecvOpBase*>(base);
    const Received r = receive_once(o->socket_, o->buffer_.data(), o->buffer_.size());
    if (r.ec == boost::asio::error::would_block) return not_done;  // wait for the edge
    o->ec_ = r.ec;
    o->bytes_transferred_ = r.bytes;
    return r.drained ? done_and_exhausted : done;
  }

 private:
  ad::socket_type socket_;
  boost::asio::mutable_buffer buffer_;
};

template <class Handler, class IoExecutor>
class RecvOp : public RecvOpBase {
 public:
  BOOST_ASIO_DEFINE_HANDLER_PTR(RecvOp);

  RecvOp(ad::socket_type socket, boost::asio::mutable_buffer buffer, Handler& handler,
         const IoExecutor& io_ex)
      : RecvOpBase(socket, buffer, &RecvOp::do_complete),
        handler_(std::move(handler)),
        work_(handler_, io_ex) {}

  static void do_complete(void* owner, ad::operation* base, const boost::system::error_code&,
                          std::size_t) {
    auto* o = static_cast<RecvOp*>(base);
    ptr p = {boost::asio::detail::addressof(o->handler_), o, o};
    ad::handler_work<Handler, IoExecutor> w(std::move(o->work_));
    // The handler is moved out before the operation's memory goes back to the allocator, which
    // may be the handler's own (as Asio's operations do).
    ad::binder2<Handler, boost::system::error_code, std::size_t> handler(o->handler_, o->ec_,
                                                                        o->bytes_transferred_);
    p.h = boost::asio::detail::addressof(handler.handler_);
    p.reset();
    if (owner != nullptr) {
      ad::fenced_block b(ad::fenced_block::half);
      w.complete(handler, handler.handler_);
    }
  }

 private:
  Handler handler_;
  ad::handler_work<Handler, IoExecutor> work_;
};

}  // namespace drained_detail

/// What read_now() did: `ec` would_block when it made no read or the read found nothing (the
/// reactor then knows the socket drained, and a read queued next waits for epoll's edge).
struct ReadNow {
  boost::system::error_code ec;
  std::size_t bytes = 0;
};

/// One recv into `buffer` now, in the caller's thread, without a trip through the event loop,
/// unless the reactor knows the socket drained (then nothing is read, and no EAGAIN is spent). A
/// read that left nothing to read (receive_once) tells the reactor the socket is drained, as
/// async_read_drained's does; otherwise it stays "try at once". The recv and the flag are under
/// the descriptor's mutex, as in the reactor's own speculative read, so an edge epoll reports
/// meanwhile (which sets the flag) is not lost. Not while an async read is queued on the socket.
inline ReadNow read_now(drained_detail::Socket& socket, boost::asio::mutable_buffer buffer) {
  namespace ad = boost::asio::detail;
  auto& impl = drained_detail::SocketAccess::implementation(socket);
  ReadNow r;
  drained_detail::State* state = impl.reactor_data_;
  if (state == nullptr || buffer.size() == 0) {  // not open, or nothing asked
    r.ec = boost::asio::error::would_block;
    return r;
  }
  ad::conditionally_enabled_mutex::scoped_lock lock(state->*member(drained_detail::MutexOf{}));
  bool& speculative = (state->*member(drained_detail::SpeculativeOf{}))[ad::reactor::read_op];
  if (!speculative ||
      !(state->*member(drained_detail::QueuesOf{}))[ad::reactor::read_op].empty()) {
    r.ec = boost::asio::error::would_block;
    return r;
  }
  const Received got = receive_once(impl.socket_, buffer.data(), buffer.size());
  r.ec = got.ec;
  r.bytes = got.bytes;
  if (got.drained && state->*member(drained_detail::EventsOf{}) != 0) {
    speculative = false;  // drained: the next read waits for the edge (see async_read_drained)
  }
  return r;
}

/// async_read_some on `socket` into `buffer` that leaves the reactor knowing when the socket is
/// drained. `reactor` is the socket's context's reactor (looked up once per connection).
/// Completion: (error_code, bytes), as async_read_some's; cancel() on the socket aborts it.
template <class Token>
auto async_read_drained(drained_detail::Socket& socket, boost::asio::detail::reactor& reactor,
                        boost::asio::mutable_buffer buffer, Token&& token) {
  return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
      [&socket, &reactor, buffer](auto handler) {
        namespace ad = boost::asio::detail;
        using Handler = decltype(handler);
        using Op = drained_detail::RecvOp<Handler, drained_detail::Socket::executor_type>;
        auto& impl = drained_detail::SocketAccess::implementation(socket);
        const bool is_continuation = boost_asio_handler_cont_helpers::is_continuation(handler);
        typename Op::ptr p = {ad::addressof(handler), Op::ptr::allocate(handler), nullptr};
        p.p = new (p.v) Op(impl.socket_, buffer, handler, socket.get_executor());
        if (buffer.size() != 0 &&
            ((impl.state_ & ad::socket_ops::non_blocking) != 0 ||
             ad::socket_ops::set_internal_non_blocking(impl.socket_, impl.state_, true,
                                                       p.p->ec_))) {
          reactor.start_op(ad::reactor::read_op, impl.socket_, impl.reactor_data_, p.p,
                           is_continuation, true);
        } else {
          reactor.post_immediate_completion(p.p, is_continuation);
        }
        p.v = p.p = nullptr;
      },
      token);
}

}  // namespace volley::transport
