#include "volley/transport/uring_tcp_connection.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <utility>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/async_result.hpp>
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

}  // namespace

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
  return {};
}

UringTcpConnection::UringTcpConnection(UringTcpConnection&& other) noexcept
    : ring_(other.ring_),
      file_(std::exchange(other.file_, Ring::File{})),
      wake_after_(other.wake_after_) {}

UringTcpConnection& UringTcpConnection::operator=(UringTcpConnection&& other) noexcept {
  if (this != &other) {
    close();
    ring_ = other.ring_;
    file_ = std::exchange(other.file_, Ring::File{});
    wake_after_ = other.wake_after_;
  }
  return *this;
}

IoResult UringTcpConnection::try_read(std::span<char> into) {
  ssize_t n = 0;
  do {
    n = ::recv(file_.fd, into.data(), into.size(), MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  IoResult r = from_call(n);
  if (n == 0 && !into.empty()) r.ec = asio::error::eof;
  return r;
}

IoResult UringTcpConnection::try_write(std::span<const char> from) {
  return send_now(file_.fd, from);
}

ReadAwaitable UringTcpConnection::read(std::span<char> into) {
  return asio::async_initiate<decltype(kWaitToken), void(error_code, std::size_t)>(
      [ring = ring_, file = file_, into](auto handler) {
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
  if (self.file_.fd < 0) {
    const auto executor = handler.get_executor();
    asio::post(executor, [h = std::move(handler)]() mutable {
      h(IoDone{asio::error::bad_descriptor, 0, nullptr, nullptr});
    });
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
      [ring = ring_, file = file_, what](auto handler) {
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
  if (file_.fd >= 0) ring_->cancel_descriptor(file_);
}

void UringTcpConnection::close() {
  if (file_.fd < 0) return;
  ring_->close_descriptor(std::exchange(file_, Ring::File{}));
}

void UringTcpConnection::wake_after(std::size_t bytes) {
  set_wake_mark(file_.fd, bytes, wake_after_);
}

}  // namespace volley::transport
