#include "strand_core.hpp"

#include <algorithm>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "step_ledger.hpp"

namespace volley::engine {

namespace asio = boost::asio;
using asio::awaitable;
using boost::system::error_code;

StrandCore::StrandCore(Worker& worker, std::size_t group, std::uint64_t index)
    : worker_(worker), group_(group), index_(index), timer_(worker.context()) {}

bool StrandCore::can_complete(Waiting what, const Connection* c) const {
  switch (what) {
    case Waiting::kRead:
      if (c == nullptr) return false;
      if (!reliable(c->link)) return true;
      return owed(*c) > 0;
    case Waiting::kAccept: return worker_.ledger().accepts_outstanding();
    case Waiting::kThink:
    case Waiting::kHello:
    case Waiting::kHandshake: return true;
    case Waiting::kNothing:
    case Waiting::kWrite:
    case Waiting::kConnect:
    case Waiting::kIdle: return false;
  }
  return false;
}

std::uint64_t StrandCore::owed(const Connection& c) const {
  if (!peer_end_) return 0;
  for (const ConnectionBytes& e : peer_end_->written) {
    if (e.conn != c.id || e.serial != c.serial || e.peer != c.peer) continue;
    const std::uint64_t have = c.step_read + c.stash;
    return e.bytes > have ? e.bytes - have : 0;
  }
  // Not listed: the peer closed it (or wrote nothing on it); what it wrote on the ones it closed
  // is known only as a sum per id.
  return owed_unlisted(c.id, c.peer, peer_end_->written);
}

void StrandCore::cancel_waits() {
  if (active_ != nullptr) std::visit([](auto& link) { link.cancel(); }, *active_);
  timer_.cancel();
}

awaitable<bool> StrandCore::sleep_until(Clock::time_point when, Waiting what) {
  bool truncated = false;
  if (!begin_sleep(when, what, truncated)) co_return false;
  co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
  co_return end_sleep(what, truncated);
}

bool StrandCore::begin_sleep(Clock::time_point when, Waiting what, bool& truncated) {
  if (!may_wait(what)) return false;  // see wait_ready
  truncated = deadline_ && when > *deadline_;
  timer_.expires_at(truncated ? *deadline_ : when);
  worker_.budget_renewed();
  waits_for(what);
  return true;
}

bool StrandCore::end_sleep(Waiting what, bool truncated) {
  waits_for(Waiting::kNothing);
  if (!may_wait(what)) return false;
  return !truncated;
}

transport::ResumingIo StrandCore::sleep_wait() {
  // The timer's completion calls the coroutine's handler on the timer's own io_context, the
  // strand's, as a resuming read's does (the wait's outcome is what end_sleep reads, not ec).
  return {[](const transport::ResumingIo& io, transport::ResumingHandler& handler) {
            static_cast<asio::steady_timer*>(io.connection)
                ->async_wait([h = std::move(handler)](const error_code& ec) mutable {
                  std::move(h)(transport::IoDone{ec, 0});
                });
          },
          &timer_,
          {}};
}

awaitable<std::optional<OpOutcome>> StrandCore::wait_ready(AnyConnection& link,
                                                           transport::Wait what,
                                                           const char* op_name,
                                                           std::optional<Waiting> as) {
  // A cut cancels the wait in progress, and only that one: one that came while this strand was
  // runnable (its last wait already complete, its resumption queued) must be seen here, or the
  // strand would wait for data that never comes, and its step would never end.
  const Waiting waiting =
      as.value_or(what == transport::Wait::kWritable ? Waiting::kWrite : Waiting::kRead);
  if (!may_wait(waiting)) co_return aborted_outcome();
  active_ = &link;
  worker_.budget_renewed();
  waits_for(waiting);
  auto [ec] = co_await std::visit([what](auto& c) { return c.wait(what); }, link);
  waits_for(Waiting::kNothing);
  active_ = nullptr;
  if (!ec) co_return std::nullopt;
  if (ec == asio::error::operation_aborted) co_return aborted_outcome();
  co_return failure_from(ec, op_name);
}

// Each connection id is a pool, as in uperf: connect and accept add a connection, disconnect
// closes the newest, and reads and writes use the newest. The mirror does the same, so both ends
// agree on which connection every operation uses.
StrandCore::Connection* StrandCore::find(std::uint32_t id) {
  for (auto it = connections_.rbegin(); it != connections_.rend(); ++it) {
    if (it->id == id) return &*it;
  }
  return nullptr;
}

void StrandCore::close(std::uint32_t id) {
  for (auto it = connections_.rbegin(); it != connections_.rend(); ++it) {
    if (it->id == id) {
      note_closed(*it);
      closing(*this, it->link);
      std::visit([](auto& link) { link.close(); }, it->link);
      connections_.erase(std::next(it).base());
      return;
    }
  }
}

Started disconnect(StrandCore& s, const OpPlan& op, StrandConnection& c) {
  return with_ops(c.link, [&](auto ops, auto& link) -> Started {
    if constexpr (requires { decltype(ops)::disconnect(s, op, c, link); }) {
      return decltype(ops)::disconnect(s, op, c, link);
    } else {
      s.close(c.id);
      return OpOutcome{};
    }
  });
}

RandomStream& StrandCore::stream(std::uint32_t conn) {
  for (auto& [id, s] : streams_) {
    if (id == conn) return s;
  }
  streams_.emplace_back(conn, RandomStream::for_connection(worker_.engine().config().seed, group_,
                                                           index_, conn, txn_));
  return streams_.back().second;
}

// Draws come from the operation's connection's stream: a slave that serves only some of a
// strand's connections draws, for each of them, what the master draws.
std::uint64_t StrandCore::draw_size(const OpPlan& op, const profile::SizeSpec& size) {
  if (!size.is_random()) return size.min_bytes;
  return stream(op.common.connection).between(size.min_bytes, size.max_bytes);
}

std::size_t StrandCore::pick_file(const OpPlan& op, const FileSet& set) {
  // Draw only when there is a choice, on both sides alike, so the streams stay in step.
  if (set.files.size() <= 1) return 0;
  return static_cast<std::size_t>(stream(op.common.connection).between(0, set.files.size() - 1));
}

std::uint64_t StrandCore::draw_file_bytes(const OpPlan& op, std::uint64_t nfiles) {
  const FileSet& set = worker_.plan().file_sets.at(*op.file_set);
  std::uint64_t total = 0;
  for (std::uint64_t f = 0; f < nfiles; ++f) total += set.files[pick_file(op, set)].size_bytes;
  return total;
}

OpOutcome StrandCore::failure_from(const error_code& ec, const std::string& what) {
  return OpOutcome{OpOutcome::Status::kFailed, classify(ec),
                   fmt::format("{}: {}", what, ec.message())};
}

void StrandCore::refused_at_header(const OpPlan& op, OpOutcome& out) {
  if (out.error != results::ErrorKind::kPeerClosed && out.error != results::ErrorKind::kReset)
    return;
  if (worker_.engine().config().slave_side) return;  // the master's listener: its own log says
  Connection* c = find(op.common.connection);
  if (c == nullptr || !closed_at_header(c->link)) return;
  out.error = results::ErrorKind::kRefused;
  out.message = fmt::format(
      "the slave closed data connection {} before any data passed on it: a slave closes a data "
      "connection whose header did not reach it within its --header-timeout (5s unless volley "
      "serve was given another; a loaded master can be that late), or that it refused, or when "
      "it stops; the slave's log says which",
      op.common.connection == 0 ? std::string("(anonymous)")
                                : std::to_string(op.common.connection));
}

OpOutcome StrandCore::not_connected(const OpPlan& op) {
  // A pool one short because a connect with canfail failed is the usual cause: say so, so that
  // the run's failure explains itself.
  const std::string why =
      failed_opens_ == 0
          ? std::string()
          : fmt::format(
                " ({} connect or accept operation{} of this strand failed or {} cut "
                "earlier, allowed by canfail or by the end of its step)",
                failed_opens_, failed_opens_ == 1 ? "" : "s", failed_opens_ == 1 ? "was" : "were");
  return OpOutcome{OpOutcome::Status::kFailed, results::ErrorKind::kNotConnected,
                   fmt::format("{}: connection {} is not open{}", op.type,
                               op.common.connection == 0 ? std::string("(anonymous)")
                                                         : std::to_string(op.common.connection),
                               why)};
}

OpOutcome StrandCore::aborted_outcome() {
  if (cut_ == CutReason::kTimeout) {
    return OpOutcome{OpOutcome::Status::kFailed, results::ErrorKind::kTimedOut, "timed out"};
  }
  return OpOutcome{OpOutcome::Status::kExpired, results::ErrorKind::kOther, {}};
}

}  // namespace volley::engine
