#include "stream_ops.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include <boost/asio/error.hpp>
#include <fmt/format.h>

#include "read_successor.hpp"
#include "strand_core.hpp"
#include "worker.hpp"

namespace volley::engine {

namespace asio = boost::asio;
using asio::awaitable;
using boost::system::error_code;

namespace {

/// What a read of a small message asks for (a ping-pong's): more than the message, so that a
/// short read tells the reactor the socket drained (see read_begin); its size matters little.
constexpr std::size_t kSmallReadAsk = std::size_t{16} * 1024;

}  // namespace

std::span<char> StreamOps::ask(std::span<char> buffer, const PendingRead& r) {
  // A large message's read asks for the whole buffer: the kernel copies what the socket holds
  // (and what arrives meanwhile) up to that, so one call takes all there is, as a blocking
  // reader's read of its whole buffer does; the count that comes with it (TCP_INQ) says whether
  // anything is left. When it wakes is the wake-up mark's business (expect).
  if (r.bytes >= kLargeMessage) return buffer;
  return buffer.first(std::min(buffer.size(), kSmallReadAsk));
}

std::uint64_t StreamOps::certain(const StrandCore& s, const PendingRead& r) {
  if (r.op->read_stream && r.bytes >= kLargeMessage && s.cut_ == CutReason::kNone &&
      s.worker_.engine().config().slave_side) {
    return std::numeric_limits<std::uint64_t>::max();
  }
  return r.left;
}

Started StreamOps::write(StrandCore& s, const OpPlan& op, StrandConnection& c, std::uint64_t bytes,
                         std::optional<std::uint64_t> chunk) {
  // A write almost always fits the socket buffer: done here, it needs no coroutine frame.
  std::uint64_t left = bytes;
  bool blocked = false;
  if (auto end = write_now(s, op, c, left, chunk, blocked)) return std::move(*end);
  return send(s, op, left, chunk, blocked);
}

Started StreamOps::read(StrandCore& s, const OpPlan& op, StrandConnection& c, std::uint64_t bytes,
                        std::optional<std::uint64_t> chunk) {
  PendingRead r{&op, &c, bytes, bytes, chunk, false};
  if (auto end = begin_read(s, r)) return std::move(*end);
  return r;
}

std::optional<OpOutcome> StreamOps::write_now(StrandCore& s, const OpPlan& op, StrandConnection& c,
                                              std::uint64_t& left,
                                              std::optional<std::uint64_t> chunk, bool& blocked) {
  const std::span<char> buffer = s.worker_.buffer();
  const std::uint64_t per_call =
      std::min<std::uint64_t>(buffer.size(), chunk.value_or(buffer.size()));
  blocked = false;
  while (left > 0) {
    const std::span<char> piece(buffer.data(), static_cast<std::size_t>(std::min(left, per_call)));
    // Try the system call first: a write almost always fits the socket buffer; going straight to
    // it saves a trip through the event loop. Only when there is no room does the strand wait.
    const transport::IoResult io =
        std::visit([piece](auto& link) { return link.try_write(piece); }, c.link);
    if (io.would_block()) {
      blocked = true;
      return std::nullopt;
    }
    s.add_written(op, io.bytes);
    c.step_written += io.bytes;
    if (io.ec) return s.failure_from(io.ec, "write");
    left -= io.bytes;
    s.worker_.count_progress();
    if (left > 0 && s.worker_.over_budget()) return std::nullopt;  // give way (see send)
  }
  return OpOutcome{};
}

awaitable<OpOutcome> StreamOps::send(StrandCore& s, const OpPlan& op, std::uint64_t bytes,
                                     std::optional<std::uint64_t> chunk, bool wait_first) {
  StrandConnection* c = s.find(op.common.connection);
  if (c == nullptr) co_return s.not_connected(op);
  std::uint64_t left = bytes;
  bool blocked = wait_first;
  for (;;) {
    if (blocked) {
      if (auto stop = co_await s.wait_ready(c->link, transport::Wait::kWritable, "write")) {
        co_return *stop;
      }
    } else if (left > 0) {
      // A writer that always finds room never suspends: write_now gave way to the others.
      co_await s.worker_.yield();
      if (s.cut_short()) co_return s.aborted_outcome();
    }
    if (auto end = write_now(s, op, *c, left, chunk, blocked)) co_return *end;
  }
}

bool StreamOps::sends_in_ring(const StrandCore& s, const StrandConnection& c) {
  // Not where a receive stands: there a ping-pong's strand resumes once per round trip, for the
  // reply, and its send is a system call made then, while the strand's state is in the cache. A
  // send through the ring costs a second resumption, when its completion comes, and at thousands
  // of connections the strand's state has left the cache by then (docs/performance.md).
  const auto* ring = std::get_if<transport::UringTcpConnection>(&c.link);
  return ring != nullptr && !ring->receive_stands() && s.may_wait(Waiting::kWrite);
}

transport::ResumingIo StreamOps::ring_send(StrandCore& s, StrandConnection& c, std::uint64_t left) {
  const std::span<char> buffer = s.worker_.buffer();
  s.active_ = &c.link;
  s.waits_for(Waiting::kWrite);
  s.worker_.budget_renewed();  // a send in the ring completes through the event loop
  return std::get<transport::UringTcpConnection>(c.link).send_resuming(
      buffer.first(static_cast<std::size_t>(std::min<std::uint64_t>(left, buffer.size()))));
}

std::optional<OpOutcome> StreamOps::ring_sent(StrandCore& s, const OpPlan& op, StrandConnection& c,
                                              std::uint64_t& left, const transport::IoDone& sent,
                                              const void* frame) {
  prefetch_successor(s, c, nullptr, frame, sent);
  s.active_ = nullptr;
  s.waits_for(Waiting::kNothing);
  s.add_written(op, sent.bytes);  // a send cancelled after it sent part counts that part
  c.step_written += sent.bytes;
  left -= sent.bytes;
  if (sent.ec) [[unlikely]] {
    if (sent.ec == asio::error::operation_aborted) return s.aborted_outcome();
    return s.failure_from(sent.ec, "write");
  }
  s.worker_.count_progress();
  if (left == 0) return OpOutcome{};
  // Only part went: the socket is full, and the rest waits for room, as on the epoll engine.
  if (!s.may_wait(Waiting::kWrite)) return s.aborted_outcome();
  return std::nullopt;
}

std::optional<OpOutcome> StreamOps::begin_read(StrandCore& s, PendingRead& r) {
  StrandConnection& c = *r.c;
  return with_ops(c.link, [&](auto ops, auto& link) -> std::optional<OpOutcome> {
    using Ops = decltype(ops);
    r.ahead = !r.chunk && link.reads_ahead();
    if constexpr (requires { Ops::before_read(link, r); }) Ops::before_read(link, r);
    if (const std::uint64_t n = StrandCore::take_stash(c, r.left); n > 0) {
      s.add_read(*r.op, n);
      c.step_read += n;
      r.left -= n;
    }
    if (r.left == 0) return OpOutcome{};
    if constexpr (requires { Ops::read_now(s, r, link); }) {
      if (r.ahead) return Ops::read_now(s, r, link);
    }
    return std::nullopt;
  });
}

std::optional<OpOutcome> StreamOps::read_begin(StrandCore& s, PendingRead& r,
                                               std::span<char>& into) {
  // A cut that came while this strand was runnable must be seen here (see wait_ready); after
  // the peer's end of the step, the read goes on only for bytes the peer wrote.
  if (!s.may_wait(Waiting::kRead, r.c)) return s.aborted_outcome();
  s.waits_for(Waiting::kRead, r.c);
  // Without chunk=, ask for more than this flowop's bytes (ask): a read that returns less than
  // it asked for tells the reactor the socket is drained, so the next read waits for epoll
  // instead of trying a read that fails with EAGAIN (one wasted system call per round trip of a
  // ping-pong otherwise). Bytes beyond the flowop's wait in the stash for the next read.
  expect(*r.c, certain(s, r));
  const std::span<char> buffer = s.worker_.buffer();
  into = r.ahead ? ask(buffer, r)
                 : buffer.first(static_cast<std::size_t>(
                       std::min({r.left, r.chunk.value_or(r.left), std::uint64_t{buffer.size()}})));
  s.active_ = &r.c->link;
  s.worker_.budget_renewed();  // a read completes through the event loop, as a wait does
  return std::nullopt;
}

transport::ReadAwaitable StreamOps::read_wait(PendingRead& r, std::span<char> into) {
  return std::visit([into](auto& link) { return link.read(into); }, r.c->link);
}

std::optional<transport::ResumingIo> StreamOps::resuming_read(PendingRead& r,
                                                              std::span<char> into) {
  return std::visit(
      [into](auto& link) -> std::optional<transport::ResumingIo> {
        if constexpr (requires { link.read_resuming(into); }) {
          return link.read_resuming(into);
        } else {
          return std::nullopt;
        }
      },
      r.c->link);
}

bool StreamOps::reads_resuming(const StrandConnection& c) {
  return std::visit(
      [](const auto& link) {
        using Link = std::remove_cvref_t<decltype(link)>;
        return requires(Link & l, std::span<char> into) { l.read_resuming(into); };
      },
      c.link);
}

void StreamOps::resumed(StrandCore& s, PendingRead& r, const void* frame,
                        const transport::IoDone& got) {
  with_ops(r.c->link, [&](auto ops, auto& link) {
    if constexpr (requires { decltype(ops)::resumed(s, *r.c, link, frame, got); }) {
      decltype(ops)::resumed(s, *r.c, link, frame, got);
    }
  });
}

std::optional<OpOutcome> StreamOps::read_end(StrandCore& s, PendingRead& r, const error_code& ec,
                                             std::size_t got) {
  s.active_ = nullptr;
  s.waiting_ = Waiting::kNothing;
  StrandConnection& c = *r.c;
  const std::uint64_t used = std::min<std::uint64_t>(got, r.left);
  c.stash += got - used;
  s.add_read(*r.op, used);
  c.step_read += used;
  r.left -= used;
  if (ec) [[unlikely]] {
    // After the peer's end of the step, a connection it closed ends a read as the end does.
    if (ec == asio::error::eof && s.cut_ == CutReason::kPeerEnded) return s.aborted_outcome();
    if (ec == asio::error::eof) {
      return OpOutcome{OpOutcome::Status::kFailed, results::ErrorKind::kPeerClosed,
                       fmt::format("read: peer closed the connection with {} of {} bytes "
                                   "still to come",
                                   r.left, r.bytes)};
    }
    if (ec == asio::error::operation_aborted) return s.aborted_outcome();
    return s.failure_from(ec, "read");
  }
  s.worker_.count_progress();
  if (r.left == 0) return OpOutcome{};
  return std::nullopt;
}

awaitable<OpOutcome> StreamOps::read_rest(StrandCore& s, PendingRead r) {
  for (;;) {
    std::span<char> into;
    if (auto stop = read_begin(s, r, into)) co_return std::move(*stop);
    transport::IoDone got;
    if (auto resuming = resuming_read(r, into)) {
      got =
          co_await std::move(*resuming);  // NOLINT(performance-move-const-arg): Asio awaits rvalues
    } else {
      auto [ec, n] = co_await read_wait(r, into);
      got = {ec, n};
    }
    if (auto end = read_end(s, r, got.ec, got.bytes)) co_return std::move(*end);
  }
}

void StreamOps::expect(StrandConnection& c, std::uint64_t bytes) {
  with_ops(c.link, [bytes](auto ops, auto& link) {
    if constexpr (requires { decltype(ops)::expect(link, bytes); }) {
      decltype(ops)::expect(link, bytes);
    }
  });
}

awaitable<OpOutcome> StreamOps::sendfile(StrandCore& s, const OpPlan& op, std::uint64_t nfiles,
                                         std::optional<std::uint64_t> chunk) {
  StrandConnection* c = s.find(op.common.connection);
  if (c == nullptr) co_return s.not_connected(op);
  const FileSet& set = s.worker_.plan().file_sets.at(*op.file_set);
  const std::uint64_t per_call = chunk.value_or(std::uint64_t{1} << 30);
  for (std::uint64_t f = 0; f < nfiles; ++f) {
    const FileEntry& file = set.files[s.pick_file(op, set)];
    const int fd = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      co_return OpOutcome{OpOutcome::Status::kFailed, results::ErrorKind::kFile,
                          fmt::format("open {}: {}", file.path, std::strerror(errno))};
    }
    off_t offset = 0;
    std::uint64_t left = file.size_bytes;
    OpOutcome out;
    while (left > 0) {
      const auto want = static_cast<std::size_t>(std::min(left, per_call));
      const transport::IoResult io = std::visit(
          [fd, &offset, want](auto& link) { return link.sendfile(fd, &offset, want); }, c->link);
      if (io.bytes > 0) {
        const auto n = static_cast<std::uint64_t>(io.bytes);
        left -= n;
        s.add_written(op, n);
        c->step_written += n;
        s.worker_.count_progress();
        if (left > 0 && s.worker_.over_budget()) {
          co_await s.worker_.yield();
          if (s.cut_short()) {
            out = s.aborted_outcome();
            break;
          }
        }
        continue;
      }
      if (io.would_block()) {
        if (auto stop = co_await s.wait_ready(c->link, transport::Wait::kWritable, "sendfile")) {
          out = std::move(*stop);
          break;
        }
        continue;
      }
      if (!io.ec) {
        // The file shrank since the run was planned: the peer would wait for bytes that will
        // never come, so this is an error, not a short transfer.
        out = OpOutcome{OpOutcome::Status::kFailed, results::ErrorKind::kFile,
                        fmt::format("sendfile {}: file is shorter than the {} bytes planned",
                                    file.path, file.size_bytes)};
      } else {
        out = s.failure_from(io.ec, "sendfile");
      }
      break;
    }
    ::close(fd);
    if (out.status != OpOutcome::Status::kOk) co_return out;
  }
  co_return OpOutcome{};
}

}  // namespace volley::engine
