#pragma once
// A stream socket read through Asio's reactor that tells the reactor when it drained the socket.
//
// Asio 1.81's own async_read_some marks a read "exhausted" only when it returns 0 bytes, so after
// every epoll edge its next read is tried at once: in a ping-pong (write, then read the answer)
// that read fails with EAGAIN, one wasted system call per round trip on each end. This read
// reports itself exhausted when it came back short (fewer bytes than asked: the kernel had no
// more), unless the peer has closed its side. A short read alone does not tell that nothing is
// left: data and a FIN that came together raise one edge, the read of the data is short, and a
// read that then waited for another edge would wait forever (tests DrainedRead.DataAndTheEnd*,
// WakeAfter.EndOfStream*). So every data socket is registered with EPOLLRDHUP as well
// (watch_peer_close), and a short read counts as drained only while the descriptor's last events,
// which the reactor keeps in its state, carry no EPOLLRDHUP, EPOLLHUP or EPOLLERR. A FIN that
// comes after those events raises an edge of its own (epoll re-queues an edge-triggered descriptor
// at every wake-up after its events were collected), and that edge lets the next read try at once.
// Then the reactor clears its "try speculatively" flag under the descriptor's mutex, in the same
// critical section as the recv, and the next read is queued without a system call until epoll's
// next edge (data that arrives after the recv raises a new edge, so none is missed). Queuing a
// read costs no epoll_ctl (unlike async_wait, which re-arms the descriptor).
//
// That is the rule for small messages (DrainRule::kShortRead, a plain recv). A stream of large
// messages reads with recvmsg and TCP_INQ, the kernel's own count of what is left (kCounted):
// exact, so a read that came back short while the rest was arriving reads on, but recvmsg with a
// control buffer costs the kernel more per read (the message header and iovec copied in, the
// control message copied out): about 0.5 us per ping-pong round trip, both ends, when every read
// was counted (docs/performance.md).
//
// This reaches into Asio's detail namespace (reactor_op, the reactor's start_op, its epoll
// descriptor, the socket's implementation): pinned to Boost 1.81's epoll reactor by the
// static_assert below, and covered by the engine's StrandIo and integration tests, by
// tests/transport/drained_read_test.cpp and by bench/callgrind_per_transaction.sh -x strace.
// Thread: the socket's io_context's.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
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

/// What one non-blocking read of a TCP socket did.
struct Received {
  boost::system::error_code ec;  ///< would_block: nothing was there; eof: the end of the stream
  std::size_t bytes = 0;
  bool drained = false;  ///< nothing is left to read: the next read must wait for epoll's edge
};

/// How a read tells that it drained the socket (see the top of this file).
enum class DrainRule {
  /// recv(2); a short read is drained unless the peer may have closed. The cheapest read: for
  /// small messages, where a read is most of a round trip's work.
  kShortRead,
  /// recvmsg(2) with TCP_INQ's count of what is left (enable_inq() on the socket), exact: a read
  /// that came back short because the rest arrived during the copy is not drained, and the next
  /// read follows at once. For streams of large messages, whose reader would otherwise go back
  /// to epoll while data is pouring in (and the sender, which on loopback runs the reader's
  /// wake-ups, pays for it: sendfile's sender spent 35% more CPU per byte with kShortRead).
  kCounted,
};

/// Asks the kernel to say, with each recvmsg of TCP socket `fd`, what is left to read (TCP_INQ).
inline bool enable_inq(int fd) {
  const int on = 1;
  return ::setsockopt(fd, IPPROTO_TCP, TCP_INQ, &on, sizeof on) == 0;
}

/// One read of TCP socket `fd` into `data`, without waiting, by `rule`. `peer_closing`: the
/// peer's FIN may be queued behind the data, so a short read is not drained (kShortRead, and
/// kCounted when the kernel sent no count).
inline Received receive_once(int fd, void* data, std::size_t size, bool peer_closing,
                             DrainRule rule = DrainRule::kShortRead) {
  Received r;
  ssize_t n = 0;
  int left = -1;  // TCP_INQ's count, when asked for and given
  if (rule == DrainRule::kShortRead) {
    do {
      n = ::recv(fd, data, size, MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
  } else {
    iovec iov{data, size};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    do {
      n = ::recvmsg(fd, &msg, MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n > 0) {
      for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == IPPROTO_TCP && c->cmsg_type == TCP_CM_INQ) {
          std::memcpy(&left, CMSG_DATA(c), sizeof left);
        }
      }
    }
  }
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
  // TCP_INQ counts a pending FIN as 1: a count of 0 is exact.
  r.drained = left >= 0 ? left == 0 : r.bytes < size && !peer_closing;
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
/// The events epoll last reported for the descriptor (the reactor keeps them there until the
/// next report, and hands them to perform_io).
struct LastEventsOf {
  using type = unsigned int ad::scheduler_operation::*;
  friend constexpr type member(LastEventsOf);
};
struct EpollFdOf {
  using type = int ad::epoll_reactor::*;
  friend constexpr type member(EpollFdOf);
};
template struct Grant<MutexOf, &State::mutex_>;
template struct Grant<EventsOf, &State::registered_events_>;
template struct Grant<QueuesOf, &State::op_queue_>;
template struct Grant<SpeculativeOf, &State::try_speculative_>;
template struct Grant<LastEventsOf, &ad::scheduler_operation::task_result_>;
template struct Grant<EpollFdOf, &ad::epoll_reactor::epoll_fd_>;

/// Whether the peer may have closed its side, so that a short read must not be taken as
/// "drained": the descriptor is not watched for it (watch_peer_close failed), or epoll's last
/// events for it said so. A FIN after those events raises an edge of its own.
inline bool peer_closing(State* state) {
  if (state == nullptr) return true;
  const std::uint32_t registered = state->*member(EventsOf{});
  // descriptor_state derives privately from scheduler_operation, where the events are kept: a
  // C-style cast is the one conversion C++ allows to an inaccessible base.
  const auto* op = (const ad::scheduler_operation*)state;  // NOLINT(google-readability-casting)
  const unsigned int last = op->*member(LastEventsOf{});
  return (registered & EPOLLRDHUP) == 0 || (last & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
}

/// The socket's reactor-side state (descriptor, flags, per-descriptor data), which basic_socket
/// keeps protected: reached through a pointer to member named in a derived class, which C++
/// allows.
struct SocketAccess : Socket {
  static auto& implementation(Socket& s) {
    return (s.*(&SocketAccess::impl_)).get_implementation();
  }
};

}  // namespace drained_detail

/// Adds EPOLLRDHUP to the events `reactor` (the socket's context's) watches on open TCP socket
/// `socket`, so that epoll says when the peer closed its side (see the top of this file). One
/// epoll_ctl; Asio's own later changes of the registration (EPOLLOUT for a write wait) keep it.
/// False if the socket is not registered or the kernel refused: its short reads are then never
/// taken as drained (correct, one read more per wait). Before the socket's first read.
inline bool watch_peer_close(drained_detail::Socket& socket,
                             boost::asio::detail::epoll_reactor& reactor) {
  namespace dd = drained_detail;
  auto& impl = dd::SocketAccess::implementation(socket);
  dd::State* state = impl.reactor_data_;
  if (state == nullptr) return false;
  boost::asio::detail::conditionally_enabled_mutex::scoped_lock lock(state->*member(dd::MutexOf{}));
  std::uint32_t& registered = state->*member(dd::EventsOf{});
  if (registered == 0) return false;
  epoll_event ev{};
  ev.events = registered | EPOLLRDHUP;
  ev.data.ptr = state;
  if (::epoll_ctl(reactor.*member(dd::EpollFdOf{}), EPOLL_CTL_MOD, impl.socket_, &ev) != 0) {
    return false;
  }
  registered = ev.events;
  return true;
}

namespace drained_detail {

/// reactive_socket_recv_op for one buffer, except that a read that left nothing (receive_once's
/// `drained`) is "done and exhausted".
class RecvOpBase : public ad::reactor_op {
 public:
  RecvOpBase(ad::socket_type socket, State* state, boost::asio::mutable_buffer buffer,
             DrainRule rule, func_type complete_func)
      : ad::reactor_op(boost::system::error_code(), &RecvOpBase::do_perform, complete_func),
        socket_(socket),
        state_(state),
        buffer_(buffer),
        rule_(rule) {}

  static status do_perform(ad::reactor_op* base) {
    auto* o = static_cast<RecvOpBase*>(base);
    const Received r = receive_once(o->socket_, o->buffer_.data(), o->buffer_.size(),
                                    peer_closing(o->state_), o->rule_);
    if (r.ec && r.ec == boost::asio::error::would_block) return not_done;  // wait for the edge
    o->ec_ = r.ec;
    o->bytes_transferred_ = r.bytes;
    return r.drained ? done_and_exhausted : done;
  }

 private:
  ad::socket_type socket_;
  State* state_;  // the socket's reactor state: its last events (peer_closing)
  boost::asio::mutable_buffer buffer_;
  DrainRule rule_;
};

template <class Handler, class IoExecutor>
class RecvOp : public RecvOpBase {
 public:
  BOOST_ASIO_DEFINE_HANDLER_PTR(RecvOp);

  RecvOp(ad::socket_type socket, State* state, boost::asio::mutable_buffer buffer, DrainRule rule,
         Handler& handler, const IoExecutor& io_ex)
      : RecvOpBase(socket, state, buffer, rule, &RecvOp::do_complete),
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

/// Whether the reactor knows `socket` drained (its last read left nothing), so that read_now()
/// would make no read: a caller that would only get would_block from it asks this first, for a
/// few instructions instead of read_now's ~70 (a ping-pong's read after its write, every round
/// trip).
inline bool known_drained(drained_detail::Socket& socket) {
  namespace ad = boost::asio::detail;
  const drained_detail::State* state =
      drained_detail::SocketAccess::implementation(socket).reactor_data_;
  return state != nullptr &&
         !(state->*member(drained_detail::SpeculativeOf{}))[ad::reactor::read_op];
}

/// One recv into `buffer` now, in the caller's thread, without a trip through the event loop,
/// unless the reactor knows the socket drained (then nothing is read, and no EAGAIN is spent). A
/// read that left nothing to read (receive_once) tells the reactor the socket is drained, as
/// async_read_drained's does; otherwise it stays "try at once". The recv and the flag are under
/// the descriptor's mutex, as in the reactor's own speculative read, so an edge epoll reports
/// meanwhile (which sets the flag) is not lost. Not while an async read is queued on the socket.
inline ReadNow read_now(drained_detail::Socket& socket, boost::asio::mutable_buffer buffer,
                        DrainRule rule = DrainRule::kShortRead) {
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
  if (!speculative || !(state->*member(drained_detail::QueuesOf{}))[ad::reactor::read_op].empty()) {
    r.ec = boost::asio::error::would_block;
    return r;
  }
  const Received got = receive_once(impl.socket_, buffer.data(), buffer.size(),
                                    drained_detail::peer_closing(state), rule);
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
                        boost::asio::mutable_buffer buffer, DrainRule rule, Token&& token) {
  return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
      [&socket, &reactor, buffer, rule](auto handler) {
        namespace ad = boost::asio::detail;
        using Handler = decltype(handler);
        using Op = drained_detail::RecvOp<Handler, drained_detail::Socket::executor_type>;
        auto& impl = drained_detail::SocketAccess::implementation(socket);
        const bool is_continuation = boost_asio_handler_cont_helpers::is_continuation(handler);
        typename Op::ptr p = {ad::addressof(handler), Op::ptr::allocate(handler), nullptr};
        p.p = new (p.v)
            Op(impl.socket_, impl.reactor_data_, buffer, rule, handler, socket.get_executor());
        if (buffer.size() != 0 && ((impl.state_ & ad::socket_ops::non_blocking) != 0 ||
                                   ad::socket_ops::set_internal_non_blocking(
                                       impl.socket_, impl.state_, true, p.p->ec_))) {
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
