#include "zero_copy_write.hpp"

#include <algorithm>
#include <chrono>
#include <span>
#include <string>
#include <utility>

#include "strand_core.hpp"

namespace volley::engine {

namespace asio = boost::asio;
using asio::awaitable;
using transport::TcpConnection;
using transport::ZeroCopySends;

namespace {

/// Why a write stopped before its last byte without failing.
enum class Stall : std::uint8_t {
  kRoom,         ///< the socket's send buffer is full
  kCompletions,  ///< the kernel refused a send until completions are read (ENOBUFS)
  kBudget,       ///< the worker's other strands' turn (see Worker::over_budget)
};

/// After a wait for completions (the socket's error queue raises EPOLLERR, which ends a wait to
/// read) that found none, as when data to read ended the wait instead: the pause before the next
/// look, so that such a wait does not spin.
constexpr auto kCompletionPause = std::chrono::milliseconds(1);

/// Reads the completions queued on `tcp` into their flowops' slots; how many sends they covered.
std::uint64_t collect_counted(StrandCore& s, TcpConnection& tcp) {
  ZeroCopySends* sends = tcp.zero_copy();
  if (sends == nullptr || sends->owed() == 0) return 0;
  return sends->collect(tcp.socket().native_handle(), [&s](const ZeroCopySends::Completed& done) {
    results::ZeroCopyCounters& z = s.worker_.slot(done.tag).counters.zerocopy;
    z.zero_copied += done.zero_copied;
    z.copied += done.copied;
  });
}

/// Sends what the socket takes now of `left` (lowered by what went). The outcome when the write
/// is over (done or failed); nullopt and why (`stall`) when the rest must wait.
std::optional<OpOutcome> write_now(StrandCore& s, const OpPlan& op, StrandConnection& c,
                                   TcpConnection& tcp, std::uint64_t& left,
                                   std::optional<std::uint64_t> chunk, Stall& stall) {
  const std::span<const char> buffer = s.worker_.zero_copy_buffer();
  if (buffer.empty()) {
    return OpOutcome{OpOutcome::Status::kFailed, results::ErrorKind::kOther,
                     std::string("write with zerocopy: no memory for its send buffer")};
  }
  ZeroCopySends& sends = *tcp.zero_copy();
  const int fd = tcp.socket().native_handle();
  const std::uint64_t per_call =
      std::min<std::uint64_t>(buffer.size(), chunk.value_or(buffer.size()));
  while (left > 0) {
    const std::span<const char> piece =
        buffer.first(static_cast<std::size_t>(std::min(left, per_call)));
    const transport::IoResult io = sends.send(fd, piece, op.slot);
    if (io.would_block()) {
      collect_counted(s, tcp);  // while the strand waits anyway
      stall = Stall::kRoom;
      return std::nullopt;
    }
    if (ZeroCopySends::no_buffers(io)) {
      if (collect_counted(s, tcp) > 0) continue;
      if (sends.owed() == 0) {
        return s.failure_from(io.ec,
                              "write with zerocopy, with no completion unread (the "
                              "socket's option memory, net.core.optmem_max, is full)");
      }
      stall = Stall::kCompletions;
      return std::nullopt;
    }
    if (io.ec) return s.failure_from(io.ec, "write");
    ++s.worker_.slot(op.slot).counters.zerocopy.sends;
    s.add_written(op, io.bytes);
    c.step_written += io.bytes;
    left -= io.bytes;
    s.worker_.count_progress();
    if (sends.unread_sends() >= ZeroCopyWrite::kCollectEvery) collect_counted(s, tcp);
    if (left > 0 && s.worker_.over_budget()) {
      stall = Stall::kBudget;
      return std::nullopt;
    }
  }
  return OpOutcome{};
}

/// The rest of a write that write_now could not finish.
awaitable<OpOutcome> send_rest(StrandCore& s, const OpPlan& op, std::uint64_t left,
                               std::optional<std::uint64_t> chunk, Stall stall) {
  StrandConnection* c = s.find(op.common.connection);
  if (c == nullptr) co_return s.not_connected(op);
  auto& tcp = std::get<TcpConnection>(c->link);
  for (;;) {
    switch (stall) {
      case Stall::kRoom:
        if (auto stop = co_await s.wait_ready(c->link, transport::Wait::kWritable, "write")) {
          co_return *stop;
        }
        break;
      case Stall::kCompletions: {
        if (auto stop = co_await s.wait_ready(c->link, transport::Wait::kReadable, "write",
                                              Waiting::kWrite)) {
          co_return *stop;
        }
        if (collect_counted(s, tcp) > 0) break;
        const bool slept =
            co_await s.sleep_until(StrandCore::Clock::now() + kCompletionPause, Waiting::kWrite);
        if (!slept) co_return s.aborted_outcome();
        break;
      }
      case Stall::kBudget:
        co_await s.worker_.yield();
        if (s.cut_short()) co_return s.aborted_outcome();
        break;
    }
    if (auto end = write_now(s, op, *c, tcp, left, chunk, stall)) co_return *end;
  }
}

}  // namespace

Started ZeroCopyWrite::write(StrandCore& s, const OpPlan& op, StrandConnection& c,
                             std::uint64_t bytes, std::optional<std::uint64_t> chunk) {
  auto& tcp = std::get<TcpConnection>(c.link);
  if (auto ec = tcp.start_zero_copy())
    return s.failure_from(ec, "write with zerocopy: SO_ZEROCOPY");
  std::uint64_t left = bytes;
  Stall stall = Stall::kRoom;
  if (auto end = write_now(s, op, c, tcp, left, chunk, stall)) return std::move(*end);
  return send_rest(s, op, left, chunk, stall);
}

void ZeroCopyWrite::collect(StrandCore& s, TcpConnection& tcp) { collect_counted(s, tcp); }

}  // namespace volley::engine
