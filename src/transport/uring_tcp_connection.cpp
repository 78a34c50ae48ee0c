#include "volley/transport/uring_tcp_connection.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <utility>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

namespace volley::transport {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;

/// A receive: its completion's byte count, 0 as the end of the stream.
class RecvOp final : public Ring::Op {
 public:
  using Handler = asio::any_completion_handler<void(error_code, std::size_t)>;
  explicit RecvOp(Handler handler) : handler_(std::move(handler)) {}
  void complete(int result) override {
    Handler handler = std::move(handler_);
    delete this;
    error_code ec;
    std::size_t bytes = 0;
    if (result > 0) {
      bytes = static_cast<std::size_t>(result);
    } else if (result == 0) {
      ec = asio::error::eof;
    } else {
      ec = ring_error(result);
    }
    // On the ring's thread, which runs the handler's executor: the coroutine resumes here.
    asio::dispatch(asio::append(std::move(handler), ec, bytes));
  }
  void drop() override { delete this; }

 private:
  ~RecvOp() override = default;
  Handler handler_;
};

/// A receive or a send a strand's coroutine awaits (read_resuming, send_resuming): its completion
/// resumes the coroutine in place, with the byte count (for a receive, 0 is the end of the stream)
/// and, for the prefetch of the strand's next read, where this operation lay (the next one's
/// allocation usually gets the block back).
class ResumingOp final : public Ring::Op {
 public:
  ResumingOp(ResumingHandler& handler, bool zero_is_eof)
      : handler_(std::move(handler)), zero_is_eof_(zero_is_eof) {}
  void complete(int result) override {
    ResumingHandler handler(std::move(handler_));
    IoDone got{{}, 0, this, handler.entry_point()};
    if (result > 0) {
      got.bytes = static_cast<std::size_t>(result);
    } else if (result == 0 && zero_is_eof_) {
      got.ec = asio::error::eof;
    } else {
      got.ec = ring_error(result);
    }
    delete this;
    handler(got);  // on the ring's thread, which runs the coroutine's io_context
  }
  /// The ring went away first: the handler's destructor unwinds the coroutine.
  void drop() override { delete this; }

 private:
  ~ResumingOp() override = default;
  ResumingHandler handler_;
  bool zero_is_eof_;
};

/// A poll for readiness: ready (with any event, errors included: the next call reports them) or
/// the error that ended it.
class PollOp final : public Ring::Op {
 public:
  using Handler = asio::any_completion_handler<void(error_code)>;
  explicit PollOp(Handler handler) : handler_(std::move(handler)) {}
  void complete(int result) override {
    Handler handler = std::move(handler_);
    delete this;
    asio::dispatch(
        asio::append(std::move(handler), result < 0 ? ring_error(result) : error_code{}));
  }
  void drop() override { delete this; }

 private:
  ~PollOp() override = default;
  Handler handler_;
};

IoResult from_call(ssize_t n) {
  if (n >= 0) return IoResult{static_cast<std::size_t>(n), {}};
  return IoResult{0, error_code(errno, boost::system::system_category())};
}

/// Completes a resuming operation with `done` through its coroutine's executor: never in place,
/// where the operation's start must not call its handler.
void post_done(ResumingHandler handler, IoDone done) {
  const auto executor = handler.get_executor();
  asio::post(executor, [h = std::move(handler), done]() mutable { h(done); });
}

}  // namespace

/// The standing receive of a connection's small messages and what it counted (see the header).
/// It is the ring's operation while a receive stands, and belongs to its connection until that
/// closes; whichever lets go last deletes it. A waiting read or readiness wait is resumed from the
/// ring's run() as bytes are counted. Every call of a handler is the last thing a member does: the
/// handler may close the connection, which may delete this.
class UringTcpConnection::Arrivals final : public Ring::Op {
 public:
  using Ready = asio::any_completion_handler<void(error_code)>;
  enum class State : std::uint8_t {
    kIdle,       ///< no receive in the ring
    kReceiving,  ///< a multishot receive stands
    kEnded,      ///< the end of the stream or an error came: nothing more will
  };

  Arrivals(Ring& ring, Ring::File file) : ring_(ring), file_(file) {}

  void start() {
    if (state_ != State::kIdle) return;
    state_ = State::kReceiving;
    ++started_;
    ring_.start(*this, [this](io_uring_sqe* sqe) { ring_.prep_counted_recv(sqe, file_); });
    settle_awaited();
  }
  [[nodiscard]] bool receiving() const { return state_ == State::kReceiving; }
  [[nodiscard]] bool holds() const { return held_ > 0 || state_ == State::kEnded; }
  [[nodiscard]] std::uint64_t started() const { return started_; }

  /// What is counted, up to `most` bytes; at the end, the end (eof or the error).
  IoResult take(std::size_t most) {
    if (held_ == 0) return IoResult{0, end_};
    const std::size_t n = std::min(held_, most);
    held_ -= n;
    return IoResult{n, {}};
  }
  /// A read of at most `most` bytes, resumed by what comes (holds() false, receiving() true).
  void wait_resuming(ResumingHandler& handler, std::size_t most) {
    resuming_.emplace(std::move(handler));
    most_ = most;
    ring_.awaited(*this, true);
  }
  /// A wait for something to take (holds() false, receiving() true).
  void wait_ready(Ready handler) {
    ready_.emplace(std::move(handler));
    ring_.awaited(*this, true);
  }
  /// Ends the waits with operation_aborted, through the executor (the caller is a strand's code).
  void abort_waits() {
    if (resuming_) post_done(take_resuming(), IoDone{asio::error::operation_aborted});
    if (ready_) {
      asio::post(ring_.context(), [h = take_ready()]() mutable {
        std::move(h)(error_code(asio::error::operation_aborted));
      });
    }
    settle_awaited();
  }
  /// The connection closes (its receive is being cancelled): this goes once the ring lets go.
  void detach() {
    abort_waits();
    attached_ = false;
    if (state_ != State::kReceiving) delete this;
  }

  void progress(int result) override {
    if (result > 0) held_ += static_cast<std::size_t>(result);
    wake();
  }
  void complete(int result) override {
    state_ = State::kIdle;
    if (result > 0) {
      held_ += static_cast<std::size_t>(result);  // ended by the kernel with more to come
    } else if (result == 0) {
      state_ = State::kEnded;
      end_ = asio::error::eof;
    } else if (result != -ENOBUFS && result != -ECANCELED) {
      state_ = State::kEnded;
      end_ = ring_error(result);
    }
    if (!attached_) {
      delete this;
      return;
    }
    // A wait that what came does not end goes on: the receive stands again (after a cancel the
    // connection's cancel() ended the waits it meant; this one began since).
    if (!holds() && waited()) start();
    wake();
  }
  void drop() override {
    state_ = State::kIdle;
    const Ready ready = ready_ ? take_ready() : Ready{};
    // Taken out by construction, not as an optional's move (GCC's maybe-uninitialized under
    // ThreadSanitizer); the handlers' destructors, at the end, unwind their coroutines.
    if (resuming_) {
      const ResumingHandler resuming = take_resuming();
      if (!attached_) delete this;
      return;
    }
    if (!attached_) delete this;
  }

 private:
  ~Arrivals() override = default;

  Ready take_ready() {
    Ready h(std::move(*ready_));
    ready_.reset();
    return h;
  }
  ResumingHandler take_resuming() {
    ResumingHandler h(std::move(*resuming_));
    resuming_.reset();
    return h;
  }
  [[nodiscard]] bool waited() const { return resuming_.has_value() || ready_.has_value(); }
  /// Tells the ring whether a wait is on the receive in flight (Ring::awaited).
  void settle_awaited() {
    if (state_ == State::kReceiving) ring_.awaited(*this, waited());
  }
  /// Hands what is counted to the waiting read, or says so to the waiting readiness wait.
  void wake() {
    if (!holds()) return;
    if (resuming_) {
      ResumingHandler handler = take_resuming();
      settle_awaited();
      const IoResult got = take(most_);
      handler(IoDone{got.ec, got.bytes, this, handler.entry_point()});
    } else if (ready_) {
      Ready handler = take_ready();
      settle_awaited();
      std::move(handler)(error_code{});  // (on the ring's thread, the handler's)
    }
  }

  Ring& ring_;
  Ring::File file_;
  std::size_t held_ = 0;  ///< bytes counted that no read took yet
  std::size_t most_ = 0;  ///< the waiting read's most
  error_code end_;        ///< in kEnded: eof or the error
  std::uint64_t started_ = 0;
  std::optional<ResumingHandler> resuming_;
  /// (In an optional: Boost 1.81's any_completion_handler move assignment recurses without end.)
  std::optional<Ready> ready_;
  State state_ = State::kIdle;
  bool attached_ = true;
};

error_code UringTcpConnection::adopt(TcpConnection& tcp, Ring& ring, UringTcpConnection& into) {
  error_code ec;
  // Non-blocking already (connected and accepted sockets are made so); release() takes the socket
  // out of the reactor's epoll set.
  const int fd = tcp.socket().release(ec);
  if (ec) return ec;
  into.close();
  into.ring_ = &ring;
  into.file_ = ring.register_file(fd);
  into.wake_after_ = 1;
  into.small_ = false;
  return {};
}

UringTcpConnection::UringTcpConnection(UringTcpConnection&& other) noexcept
    : ring_(other.ring_),
      file_(std::exchange(other.file_, Ring::File{})),
      wake_after_(other.wake_after_),
      small_(other.small_),
      arrivals_(std::exchange(other.arrivals_, nullptr)) {}

UringTcpConnection& UringTcpConnection::operator=(UringTcpConnection&& other) noexcept {
  if (this != &other) {
    close();
    ring_ = other.ring_;
    file_ = std::exchange(other.file_, Ring::File{});
    wake_after_ = other.wake_after_;
    small_ = other.small_;
    arrivals_ = std::exchange(other.arrivals_, nullptr);
  }
  return *this;
}

IoResult UringTcpConnection::try_read(std::span<char> into) {
  if (arrivals_ != nullptr) {
    if (arrivals_->holds()) return arrivals_->take(into.size());
    if (arrivals_->receiving()) return IoResult{0, asio::error::would_block};
  }
  ssize_t n = 0;
  do {
    n = ::recv(file_.fd, into.data(), into.size(), MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  IoResult r = from_call(n);
  if (n == 0 && !into.empty()) r.ec = asio::error::eof;
  return r;
}

void UringTcpConnection::keep_receiving() { small_ = true; }

UringTcpConnection::Arrivals* UringTcpConnection::standing() {
  if (arrivals_ == nullptr) {
    if (!small_ || file_.fd < 0 || !ring_->has_scratch()) return nullptr;
    arrivals_ = new Arrivals(*ring_, file_);
  }
  if (!arrivals_->holds() && !arrivals_->receiving()) {
    if (!small_) return nullptr;
    arrivals_->start();  // (again, after a cancel or the kernel's end of it)
  }
  return arrivals_;
}

bool UringTcpConnection::receive_stands() const {
  return arrivals_ != nullptr && arrivals_->receiving();
}

bool UringTcpConnection::holds_arrivals() const {
  return arrivals_ != nullptr && arrivals_->holds();
}

std::uint64_t UringTcpConnection::receives_started() const {
  return arrivals_ != nullptr ? arrivals_->started() : 0;
}

IoResult UringTcpConnection::try_write(std::span<const char> from) {
  return send_now(file_.fd, from);
}

ReadAwaitable UringTcpConnection::read(std::span<char> into) {
  return asio::async_initiate<decltype(kWaitToken), void(error_code, std::size_t)>(
      [ring = ring_, file = file_, arrivals = standing(), into](auto handler) {
        if (arrivals != nullptr && arrivals->holds()) {
          const IoResult got = arrivals->take(into.size());
          asio::post(asio::append(std::move(handler), got.ec, got.bytes));
          return;
        }
        if (arrivals != nullptr && arrivals->receiving()) {
          // Ready: take what came (called from the ring's run(), the arrivals still there), on
          // the handler's executor; or the error that ended the wait.
          const auto executor = asio::get_associated_executor(handler);
          arrivals->wait_ready(asio::bind_executor(
              executor, [arrivals, into, h = std::move(handler)](error_code ec) mutable {
                IoResult got{0, ec};
                if (!ec) got = arrivals->take(into.size());
                asio::dispatch(asio::append(std::move(h), got.ec, got.bytes));
              }));
          return;
        }
        if (file.fd < 0) {
          asio::post(asio::append(std::move(handler), error_code(asio::error::bad_descriptor),
                                  std::size_t{0}));
          return;
        }
        auto* op = new RecvOp(std::move(handler));
        ring->start(*op, [file, into](io_uring_sqe* sqe) {
          io_uring_prep_recv(sqe, file.fd, into.data(), into.size(), 0);
          file.target(sqe);
        });
      },
      kWaitToken);
}

template <class Prepare>
void UringTcpConnection::start(const ResumingIo& io, ResumingHandler& handler, bool zero_is_eof,
                               Prepare prepare) {
  auto& self = *static_cast<UringTcpConnection*>(io.connection);
  Arrivals* standing = zero_is_eof ? self.standing() : nullptr;
  if (standing != nullptr) {  // a read, where a receive stands or stood
    Arrivals& arrivals = *standing;
    if (arrivals.holds()) {  // (not in place: never before start() returns)
      const IoResult got = arrivals.take(io.buffer.size());
      post_done(std::move(handler), IoDone{got.ec, got.bytes});
      return;
    }
    if (arrivals.receiving()) {
      arrivals.wait_resuming(handler, io.buffer.size());
      return;
    }
  }
  if (self.file_.fd < 0) {
    post_done(std::move(handler), IoDone{asio::error::bad_descriptor});
    return;
  }
  auto* op = new ResumingOp(handler, zero_is_eof);
  self.ring_->start(*op, [file = self.file_, buffer = io.buffer, &prepare](io_uring_sqe* sqe) {
    prepare(sqe, file.fd, buffer);
    file.target(sqe);
  });
}

void UringTcpConnection::start_read(const ResumingIo& read, ResumingHandler& handler) {
  start(read, handler, true, [](io_uring_sqe* sqe, int fd, asio::mutable_buffer into) {
    io_uring_prep_recv(sqe, fd, into.data(), into.size(), 0);
  });
}

void UringTcpConnection::start_send(const ResumingIo& send, ResumingHandler& handler) {
  start(send, handler, false, [](io_uring_sqe* sqe, int fd, asio::mutable_buffer from) {
    io_uring_prep_send(sqe, fd, from.data(), from.size(), MSG_NOSIGNAL);
  });
}

WaitAwaitable UringTcpConnection::wait(Wait what) {
  return asio::async_initiate<decltype(kWaitToken), void(error_code)>(
      [ring = ring_, file = file_, arrivals = what == Wait::kReadable ? standing() : nullptr,
       what](auto handler) {
        if (arrivals != nullptr) {  // readable: something to take
          if (arrivals->holds()) {
            asio::post(asio::append(std::move(handler), error_code{}));
            return;
          }
          if (arrivals->receiving()) {
            arrivals->wait_ready(std::move(handler));
            return;
          }
        }
        if (file.fd < 0) {
          asio::post(asio::append(std::move(handler), error_code(asio::error::bad_descriptor)));
          return;
        }
        auto* op = new PollOp(std::move(handler));
        ring->start(*op, [file, what](io_uring_sqe* sqe) {
          io_uring_prep_poll_add(sqe, file.fd, what == Wait::kReadable ? POLLIN : POLLOUT);
          file.target(sqe);
        });
      },
      kWaitToken);
}

IoResult UringTcpConnection::sendfile(int fd, off_t* offset, std::size_t bytes) {
  return sendfile_now(file_.fd, fd, offset, bytes);
}

void UringTcpConnection::cancel() {
  if (file_.fd < 0) return;
  ring_->cancel_descriptor(file_);
  if (arrivals_ != nullptr) arrivals_->abort_waits();
}

void UringTcpConnection::close() {
  if (file_.fd < 0) return;
  if (arrivals_ != nullptr) std::exchange(arrivals_, nullptr)->detach();
  ring_->close_descriptor(std::exchange(file_, Ring::File{}));
}

void UringTcpConnection::wake_after(std::size_t bytes) {
  set_wake_mark(file_.fd, bytes, wake_after_);
}

}  // namespace volley::transport
