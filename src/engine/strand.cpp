#include "strand.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "volley/profile/flowop_traits.hpp"

namespace volley::engine {

namespace asio = boost::asio;
using asio::awaitable;
using boost::system::error_code;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

/// How long a busy think spins before it lets the rest of its worker run (and sees a cut).
constexpr auto kSpinSlice = std::chrono::microseconds(50);

std::uint64_t elapsed_ns(std::chrono::steady_clock::time_point from,
                         std::chrono::steady_clock::time_point to) {
  const auto d = std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count();
  return d > 0 ? static_cast<std::uint64_t>(d) : 0;
}

bool opens_connection(const OpPlan& op) {
  return profile::opens(profile::traits(op.spec).connection);
}

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace

Strand::Strand(Worker& worker, std::size_t group, std::uint64_t index)
    : StrandCore(worker, group, index) {}

awaitable<void> Strand::run() {
  const Plan& plan = worker_.plan();
  // The steps, their iterations and their operations all run in this one coroutine: a frame per
  // iteration (and one per read) was an allocation per round trip, and Asio's per-thread cache of
  // two blocks missed it as soon as three were freed in a row; a frame per step was 160 bytes
  // more per connection. What an operation keeps across its waits is `run` (op_run.hpp).
  OpRun run;
  for (std::size_t t = 0; t < plan.txn_count; ++t) {
    co_await worker_.wait_release(t);
    if (!enter_step(t)) {
      end_step(t);
      continue;
    }
    const TxnPlan& txn = plan.groups[group_].txns[t];
    const TxnLoop loop = begin_txn(txn);
    if (loop.idle) co_await sleep_until(Clock::time_point::max(), Waiting::kIdle);
    for (std::uint64_t i = 0; !loop.idle && i < loop.limit; ++i) {
      // An iteration may never suspend (nop, busy think, data always there): give way now and then
      // so the worker's other strands, cuts and interval requests run.
      if (worker_.over_budget()) {
        co_await worker_.yield();
        last_end_.reset();
      }
      // The peer's end of the step ends a duration-bound one here; an iterations-bound one runs
      // on, since the peer completed every iteration and each of this side's can complete too.
      if ((cut_ != CutReason::kNone && (cut_ != CutReason::kPeerEnded || loop.duration)) ||
          worker_.stopping()) {
        break;
      }
      const auto now = last_end_ ? *last_end_ : Clock::now();
      last_end_.reset();
      if (deadline_ && now >= *deadline_) break;
      auto intended = now;
      auto started = now;
      if (loop.schedule) {
        // Intended start times come from the schedule, not from when the last one ended, so a
        // slow response does not hide the requests that should have been sent meanwhile (wrk2).
        intended = loop.start + loop.schedule->offset(i);
        // Only starts before the step's end are the step's (PacedSchedule::intended_before): one
        // intended at the very deadline is not run.
        if (deadline_ && intended >= *deadline_) break;
        if (intended > now) {
          bool truncated = false;
          if (!begin_sleep(intended, Waiting::kThink, truncated)) break;
          run.io = sleep_wait();
          co_await std::move(run.io);  // NOLINT(performance-move-const-arg): Asio awaits rvalues
          if (!end_sleep(Waiting::kThink, truncated)) break;
          started = Clock::now();
        }
      }
      auto previous = started;
      // A burst's iterations run in place (its protocol's executor) until one must wait.
      std::optional<OpAwait> begun;
      if (loop.bursting != nullptr) {
        const std::uint64_t first = i;
        begun = run_burst(run, txn, *loop.bursting, i, loop.limit, previous, loop.timing);
        if (!begun && i != first) {  // stopped between two iterations: the checks above decide
          --i;
          continue;
        }
        intended = started = previous;
      }
      bool fresh = false;  // `previous` was read from the clock, and nothing ran since
      bool go_on = true;
      for (auto op = txn.ops.begin(); go_on && op != txn.ops.end(); ++op) {
        for (std::uint64_t c = 0; c < op->common.count; ++c) {
          OpAwait next = begun ? *begun : begin_op(run, *op);
          begun.reset();
          while (next != OpAwait::kNothing) {
            if (next == OpAwait::kOutcome) {
              run.out = co_await std::move(*run.later);
              run.later.reset();
              break;
            }
            const transport::IoDone got =
                co_await std::move(run.io);  // NOLINT(performance-move-const-arg): Asio awaits
                                             // rvalues; no frame, no dispatch
            next = resume_op(run, next, got, &loop);
          }
          worker_.count_progress();
          const auto done = loop.timing ? Clock::now() : Clock::time_point{};
          if (run.out.status == OpOutcome::Status::kOk) [[likely]] {
            count_ok(*op, previous, done, loop.timing);
          } else if (!account_op(txn, *op, run.out, previous, done, loop.timing)) {
            go_on = false;
            break;
          }
          previous = done;
          fresh = loop.timing;
          if (worker_.over_budget()) {
            co_await worker_.yield();
            fresh = false;
          }
        }
      }
      if (!go_on) break;
      if (fresh) last_end_ = previous;
      account_iteration(txn, intended, started, previous, loop.timing);
    }
    end_step(t);
  }
  // Connections stay open until the engine finishes (close_all): closing them here, when this
  // side's last step ends, would show the peer, still inside that step, a closed connection.
}

bool Strand::enter_step(std::size_t t) {
  txn_ = t;
  begin_step();
  if (failed_ || worker_.stopping() || t >= worker_.plan().groups[group_].txns.size()) return false;
  in_txn_ = true;
  if (cut_ != CutReason::kStopped) cut_ = CutReason::kNone;
  if (early_cut_ && early_cut_->first == t) cut_ = std::max(cut_, early_cut_->second);
  if (peer_end_ && peer_end_->txn == t) cut_ = std::max(cut_, CutReason::kPeerEnded);
  return true;
}

void Strand::end_step(std::size_t t) {
  if (in_txn_) {
    in_txn_ = false;
    sample_tcp(worker_.plan().groups[group_].txns[t]);
  }
  early_cut_.reset();
  if (peer_end_ && peer_end_->txn <= t) peer_end_.reset();
  next_txn_ = t + 1;
  report_step_written();
  worker_.strand_done(t);
}

void Strand::sample_tcp(const TxnPlan& txn) { add_tcp_readings(worker_.slot(txn.slot).tcp); }

void Strand::sample_tcp_now(std::vector<results::SlotStats>& slots) {
  const auto& txns = worker_.plan().groups[group_].txns;
  if (!in_txn_ || txn_ >= txns.size() || txns[txn_].slot >= slots.size()) return;
  add_tcp_readings(slots[txns[txn_].slot].tcp);
}

void Strand::add_tcp_readings(stats::TcpSummary& into) {
  if (!worker_.engine().config().sample_tcp) return;
  for (Connection& c : connections_) sample(c.link, into);
}

void Strand::close_all() {
  for (auto& c : connections_) {
    closing(*this, c.link);
    std::visit([](auto& link) { link.close(); }, c.link);
  }
  connections_.clear();
  inbox_.clear();
}

void Strand::count_ok(const OpPlan& op, Clock::time_point from, Clock::time_point done,
                      bool timing) {
  results::SlotStats& stats = worker_.slot(op.slot);
  ++stats.counters.ops;
  if (timing) stats.latency.record(elapsed_ns(from, done));
  count_own_op();
}

Strand::TxnLoop Strand::begin_txn(const TxnPlan& txn) {
  const bool slave = worker_.engine().config().slave_side;
  TxnLoop loop;
  loop.start = worker_.txn_start();
  loop.duration = std::holds_alternative<profile::Duration>(txn.bound);
  deadline_.reset();
  last_end_.reset();
  if (loop.duration && !slave) {
    deadline_ = loop.start + std::get<profile::Duration>(txn.bound).length;
  }
  txn_slot_ = txn.slot;
  const bool moves_data = std::any_of(txn.ops.begin(), txn.ops.end(), [](const OpPlan& op) {
    return profile::traits(op.spec).connection != profile::OnConnection::kNone;
  });
  // Nothing to answer (no flowops, or only think and nop): no data from the master paces this
  // mirror, so looping would only burn the slave's CPU.
  loop.idle = !moves_data && loop.duration && slave;
  // (A slave's mirror has no rate: it follows the master's data, whatever its pace.)
  if (txn.rate_per_s && !slave) {
    // Strand index_ of the group's strands over all processes: each process phases its share as
    // the others do, so the group's iterations are spread evenly however it is spread.
    loop.schedule.emplace(*txn.rate_per_s, index_, worker_.plan().groups[group_].strands);
    // What the schedule asks for within a duration step, which the run's rate rule compares
    // the iterations done with (report::paced_fell_behind).
    if (loop.duration) {
      worker_.slot(txn.slot).counters.scheduled +=
          loop.schedule->intended_before(std::get<profile::Duration>(txn.bound).length);
    }
  }
  loop.limit = loop.duration ? std::numeric_limits<std::uint64_t>::max()
                             : std::get<profile::Iterations>(txn.bound).count;
  // One clock read per operation: each operation's end is the next one's start, and the last
  // one's end the next iteration's start. The clock costs ~27 ns here, a ping-pong round trip
  // ~10 us of CPU, so this keeps recording around 1%.
  loop.timing = worker_.engine().config().record_latency;
  loop.bursting = burst_op(txn);
  return loop;
}

OpAwait Strand::begin_op(OpRun& run, const OpPlan& op) {
  // (A cut that ended the strand ends an operation with a timer the same way: execute() asks
  // first.)
  if (cut_ == CutReason::kEnded || cut_ == CutReason::kStopped) {
    run.out = aborted_outcome();
    return OpAwait::kNothing;
  }
  if (Connection* stream = plain_stream(op)) {
    // A byte stream's write or read (most operations of a ping-pong or a stream), begun here
    // without start()'s dispatch and its Started variant.
    if (const auto* w = std::get_if<profile::WriteOp>(&op.spec)) {
      return begin_write(run, op, *stream, draw_size(op, w->size));
    }
    // Field by field: GCC 12 built a whole PendingRead (zeroed, then copied) here.
    PendingRead& r = run.read;
    r.op = &op;
    r.c = stream;
    r.bytes = r.left = draw_size(op, std::get<profile::ReadOp>(op.spec).size);
    r.chunk.reset();
    if (auto end = StreamOps::begin_read(*this, r)) {
      run.out = std::move(*end);
      return OpAwait::kNothing;
    }
    return first_wait(run);
  }
  if (needs_timer(op)) {
    run.later.emplace(execute(op));
    return OpAwait::kOutcome;
  }
  return take_started(run, start(op));
}

OpAwait Strand::begin_write(OpRun& run, const OpPlan& op, Connection& c, std::uint64_t bytes) {
  if (bytes > 0 && StreamOps::sends_in_ring(*this, c)) {
    run.op = &op;
    run.c = &c;
    run.left = bytes;
    run.io = StreamOps::ring_send(*this, c, bytes);
    return OpAwait::kSend;
  }
  bool blocked = false;
  if (auto end = StreamOps::write_now(*this, op, c, bytes, std::nullopt, blocked)) {
    run.out = std::move(*end);
    return OpAwait::kNothing;
  }
  run.later.emplace(StreamOps::send(*this, op, bytes, std::nullopt, blocked));
  return OpAwait::kOutcome;
}

OpAwait Strand::resume_op(OpRun& run, OpAwait waited, const transport::IoDone& got,
                          const void* frame) {
  if (waited == OpAwait::kSend) {
    if (auto end = StreamOps::ring_sent(*this, *run.op, *run.c, run.left, got, frame)) {
      run.out = std::move(*end);
      return OpAwait::kNothing;
    }
    run.io = StreamOps::ring_send(*this, *run.c, run.left);
    return OpAwait::kSend;
  }
  if (waited == OpAwait::kReceive) StreamOps::resumed(*this, run.read, frame, got);
  if (auto end = StreamOps::read_end(*this, run.read, got.ec, got.bytes)) {
    run.out = std::move(*end);
    return OpAwait::kNothing;
  }
  return next_read(run);
}

OpAwait Strand::first_wait(OpRun& run) {
  // A connection without a resuming read (TLS, the tests' in-memory ones) reads through a
  // coroutine of its own, as its read() is one anyway.
  if (!StreamOps::reads_resuming(*run.read.c)) {
    run.later.emplace(StreamOps::read_rest(*this, run.read));
    return OpAwait::kOutcome;
  }
  return next_read(run);
}

OpAwait Strand::next_read(OpRun& run) {
  std::span<char> into;
  if (auto stop = StreamOps::read_begin(*this, run.read, into)) {
    run.out = std::move(*stop);
    return OpAwait::kNothing;
  }
  run.io = *StreamOps::resuming_read(run.read, into);
  return OpAwait::kReceive;
}

OpAwait Strand::take_started(OpRun& run, Started begun) {
  if (auto* over = std::get_if<OpOutcome>(&begun)) {
    run.out = std::move(*over);
    return OpAwait::kNothing;
  }
  if (auto* later = std::get_if<awaitable<OpOutcome>>(&begun)) {
    run.later.emplace(std::move(*later));
    return OpAwait::kOutcome;
  }
  run.read = std::get<PendingRead>(begun);
  return first_wait(run);
}

std::optional<OpAwait> Strand::run_burst(OpRun& run, const TxnPlan& txn, const OpPlan& op,
                                         std::uint64_t& i, std::uint64_t limit,
                                         Clock::time_point& from, bool timing) {
  std::optional<Started> begun = burst(txn, op, i, limit, from, timing);
  if (!begun) return std::nullopt;
  return take_started(run, std::move(*begun));
}

bool Strand::account_op(const TxnPlan& txn, const OpPlan& op, OpOutcome& out,
                        Clock::time_point from, Clock::time_point done, bool timing) {
  results::SlotStats& stats = worker_.slot(op.slot);
  switch (out.status) {
    case OpOutcome::Status::kOk:  // (run() counts it itself: count_ok)
      count_ok(op, from, done, timing);
      return true;
    case OpOutcome::Status::kExpired:
      ++stats.counters.expired;
      if (opens_connection(op)) ++failed_opens_;
      return false;
    case OpOutcome::Status::kLost: ++stats.counters.datagrams.timeouts; return true;
    case OpOutcome::Status::kFailed:
      refused_at_header(op, out);
      ++stats.counters.errors[static_cast<std::size_t>(out.error)];
      ++worker_.slot(txn.slot).counters.errors[static_cast<std::size_t>(out.error)];
      worker_.note_error(where(op), out.message.take(), !op.common.canfail);
      if (!op.common.canfail) {
        failed_ = true;
        return false;
      }
      if (opens_connection(op)) ++failed_opens_;
      return cut_ != CutReason::kEnded && cut_ != CutReason::kStopped;
  }
  return true;
}

void Strand::account_iteration(const TxnPlan& txn, Clock::time_point intended,
                               Clock::time_point started, Clock::time_point ended, bool timing) {
  results::SlotStats& stats = worker_.slot(txn.slot);
  ++stats.counters.ops;
  count_own_iteration();
  if (timing) {
    stats.latency.record(elapsed_ns(intended, ended));
    if (txn.uncorrected_slot) {
      worker_.slot(*txn.uncorrected_slot).latency.record(elapsed_ns(started, ended));
    }
  }
}

std::optional<std::chrono::nanoseconds> Strand::op_timeout(const OpPlan& op) {
  if (!needs_timer(op)) return std::nullopt;
  return op.common.timeout ? op.common.timeout : default_timeout(op);
}

bool Strand::needs_timer(const OpPlan& op) {
  // Asked before every operation, so without building op_timeout's value. timeout= is the
  // master's: a slave follows the master's data, so its mirror of a timed-out write reads
  // exactly the bytes that were sent, and is cut with the step.
  if (worker_.engine().config().slave_side) return false;
  return op.common.timeout.has_value() ||
         (std::holds_alternative<profile::ReadOp>(op.spec) && default_timeout(op).has_value());
}

std::optional<std::chrono::nanoseconds> Strand::default_timeout(const OpPlan& op) {
  if (!std::holds_alternative<profile::ReadOp>(op.spec)) return std::nullopt;
  const Connection* c = find(op.common.connection);
  if (c == nullptr) return std::nullopt;
  return default_read_timeout(c->link);
}

awaitable<OpOutcome> Strand::execute(const OpPlan& op) {
  if (cut_ == CutReason::kEnded || cut_ == CutReason::kStopped) co_return aborted_outcome();
  const auto timeout = op_timeout(op);
  const std::uint64_t seq = ++op_seq_;
  if (timeout) {
    if (!op_timer_) op_timer_ = std::make_unique<asio::steady_timer>(worker_.context());
    op_timer_->expires_after(*timeout);
    op_timer_->async_wait([this, seq](const error_code& ec) {
      if (ec || seq != op_seq_ || cut_ != CutReason::kNone) return;
      cut_ = CutReason::kTimeout;
      cancel_waits();
    });
  }
  Started begun = start(op);
  // (Not `?:`: GCC 12 miscompiles a co_await inside a conditional expression.)
  OpOutcome out;
  if (auto* over = std::get_if<OpOutcome>(&begun)) {
    out = std::move(*over);
  } else if (auto* later = std::get_if<awaitable<OpOutcome>>(&begun)) {
    out = co_await std::move(*later);
  } else {
    out = co_await StreamOps::read_rest(*this, std::get<PendingRead>(begun));
  }
  ++op_seq_;  // a timeout that fires from now on belongs to no operation
  if (timeout) op_timer_->cancel();
  if (cut_ == CutReason::kTimeout) cut_ = CutReason::kNone;
  co_return out;
}

Started Strand::start(const OpPlan& op) {
  return std::visit(
      Overloaded{
          [&](const profile::ConnectOp& c) -> Started { return do_connect(op, c); },
          [&](const profile::AcceptOp& a) -> Started { return do_accept(op, a); },
          [&](const profile::DisconnectOp&) -> Started {
            Connection* c = find(op.common.connection);
            if (c == nullptr) return not_connected(op);
            return disconnect(*this, op, *c);
          },
          [&](const profile::WriteOp& w) -> Started {
            return write(op, draw_size(op, w.size), w.chunk_bytes);
          },
          [&](const profile::ReadOp& r) -> Started {
            return read(op, draw_size(op, r.size), r.chunk_bytes);
          },
          [&](const profile::SendfileOp& s) -> Started { return sendfile(op, 1, s.chunk_bytes); },
          [&](const profile::SendfilevOp& s) -> Started {
            return sendfile(op, s.nfiles, s.chunk_bytes);
          },
          [&](const profile::RecvFileOp& r) -> Started {
            return read(op, draw_file_bytes(op, r.nfiles), {});
          },
          [&](const profile::ThinkOp& t) -> Started { return do_think(t); },
          [&](const profile::NopOp&) -> Started { return OpOutcome{}; },
      },
      op.spec);
}

Started Strand::write(const OpPlan& op, std::uint64_t bytes, std::optional<std::uint64_t> chunk) {
  Connection* c = find(op.common.connection);
  if (c == nullptr) return not_connected(op);
  return with_ops(
      c->link, [&](auto ops, auto&) { return decltype(ops)::write(*this, op, *c, bytes, chunk); });
}

Started Strand::read(const OpPlan& op, std::uint64_t bytes, std::optional<std::uint64_t> chunk) {
  Connection* c = find(op.common.connection);
  if (c == nullptr) return not_connected(op);
  return with_ops(
      c->link, [&](auto ops, auto&) { return decltype(ops)::read(*this, op, *c, bytes, chunk); });
}

// Through the connection surface's sendfile, whatever the protocol (UDP's refuses).
Started Strand::sendfile(const OpPlan& op, std::uint64_t nfiles,
                         std::optional<std::uint64_t> chunk) {
  return StreamOps::sendfile(*this, op, nfiles, chunk);
}

Strand::Connection* Strand::plain_stream(const OpPlan& op) {
  if (!op.plain_stream) return nullptr;
  Connection* c = find(op.common.connection);
  if (c == nullptr || !is_stream(c->link)) return nullptr;
  return c;
}

const OpPlan* Strand::burst_op(const TxnPlan& txn) {
  if (txn.rate_per_s || txn.ops.size() != 1) return nullptr;
  const OpPlan& op = txn.ops.front();
  const bool moves = std::holds_alternative<profile::WriteOp>(op.spec) ||
                     std::holds_alternative<profile::ReadOp>(op.spec);
  if (!moves || op.common.count != 1 || needs_timer(op)) return nullptr;
  const Connection* c = find(op.common.connection);
  if (c == nullptr || !bursts(c->link)) return nullptr;
  return &op;
}

std::optional<Started> Strand::burst(const TxnPlan& txn, const OpPlan& op, std::uint64_t& i,
                                     std::uint64_t limit, Clock::time_point& from, bool timing) {
  Connection* c = find(op.common.connection);
  if (c == nullptr) return std::nullopt;
  return with_ops(c->link, [&](auto ops, auto&) -> std::optional<Started> {
    if constexpr (requires { &decltype(ops)::burst; }) {
      return decltype(ops)::burst(*this, txn, op, *c, i, limit, from, timing);
    } else {
      return std::nullopt;
    }
  });
}

Started Strand::do_connect(const OpPlan& op, const profile::ConnectOp& c) {
  const EngineConfig& config = worker_.engine().config();
  transport::ConnectionHeader who{config.token, static_cast<std::uint32_t>(group_),
                                  static_cast<std::uint32_t>(index_), op.common.connection};
  if (config.connect_in_memory) {
    worker_.count_connection(false);
    connections_.push_back(Connection{
        op.common.connection, config.connect_in_memory(worker_.context().get_executor(), who),
        next_serial(op.common.connection, 0)});
    worker_.count_connection(true);
    return OpOutcome{};
  }
  const HostTarget* target = nullptr;  // not copied: a connect must not allocate
  if (config.peer) {
    target = &*config.peer;
  } else {
    const auto it = config.targets.find(c.connection.remotehost);
    if (it == config.targets.end()) {
      return OpOutcome{OpOutcome::Status::kFailed, results::ErrorKind::kUnreachable,
                       fmt::format("no slave serves remotehost '{}'", c.connection.remotehost)};
    }
    target = &it->second;
  }
  who.token = config.tokens().token_for(target->peer);
  const ConnectTarget to{target, target->address,
                         c.connection.port.value_or(target->port_for(index_)), who};
  if (auto begun = connect(c.connection.protocol, *this, op, c, to)) return std::move(*begun);
  return OpOutcome{
      OpOutcome::Status::kFailed, results::ErrorKind::kOther,
      fmt::format("connect: no executor for protocol {}", static_cast<int>(c.connection.protocol))};
}

awaitable<OpOutcome> Strand::do_accept(const OpPlan& op, const profile::AcceptOp& a) {
  const std::uint32_t id = op.common.connection;
  worker_.count_connection(false);
  for (;;) {
    auto box = std::find_if(inbox_.begin(), inbox_.end(),
                            [id](const auto& entry) { return entry.first == id; });
    if (box != inbox_.end() && !box->second.empty()) {
      const std::uint32_t peer = box->second.front().peer;
      AnyConnection link = std::move(box->second.front().link);
      box->second.erase(box->second.begin());
      // An emptied box would keep its buffer (a connection's size) for the strand's life.
      if (box->second.empty()) inbox_.erase(box);
      if (inbox_.empty()) inbox_.shrink_to_fit();
      error_code ec = prepare_arrival(link, &a.connection);
      if (!ec && a.connection.protocol == profile::Protocol::kTcp) ec = move_to_ring(worker_, link);
      if (ec) co_return failure_from(ec, "accepted socket");
      connections_.push_back(Connection{id, std::move(link), next_serial(id, peer), peer});
      worker_.count_connection(true);
      // A protocol over TCP (TLS) begins its own part on the connection as it arrived.
      if (auto more = accept(a.connection.protocol, *this, op, a))
        co_return co_await std::move(*more);
      co_return OpOutcome{};
    }
    if (!may_wait(Waiting::kAccept)) co_return aborted_outcome();  // see wait_ready
    awaiting_conn_ = id;
    worker_.budget_renewed();
    timer_.expires_at(Clock::time_point::max());
    worker_.accept_wait_begins();
    waits_for(Waiting::kAccept);
    co_await timer_.async_wait(kAwait);
    waits_for(Waiting::kNothing);
    worker_.accept_wait_ends();
    awaiting_conn_.reset();
    // Woken by the connection it waits for, by a cut, or by the peer's end of the step: a
    // connection that came is taken first (the loop), whatever woke it.
    if (cut_short()) co_return aborted_outcome();
  }
}

awaitable<OpOutcome> Strand::do_think(const profile::ThinkOp& t) {
  const auto end = Clock::now() + t.duration;
  const bool truncated = deadline_ && end > *deadline_;
  const auto until = truncated ? *deadline_ : end;
  worker_.think_begins();
  struct Ends {
    Worker& worker;
    ~Ends() { worker.think_ends(); }
  } ends{worker_};  // on every way out, a cut included
  if (t.busy) {
    // Spin in short slices, giving way between them: the worker's other strands keep running
    // (at a share of the CPU) and a cut or a timeout ends the think.
    for (;;) {
      const auto slice_end = std::min(until, Clock::now() + kSpinSlice);
      while (Clock::now() < slice_end) {
      }
      if (slice_end >= until) break;
      co_await worker_.yield();
      if (!may_wait(Waiting::kThink)) co_return aborted_outcome();
    }
  } else if (!co_await sleep_until(until)) {
    co_return aborted_outcome();
  }
  if (truncated) co_return OpOutcome{OpOutcome::Status::kExpired, results::ErrorKind::kOther, {}};
  co_return OpOutcome{};
}

void Strand::deliver(std::uint32_t conn, std::uint32_t peer, AnyConnection link) {
  auto box = std::find_if(inbox_.begin(), inbox_.end(),
                          [conn](const auto& entry) { return entry.first == conn; });
  if (box == inbox_.end()) {
    inbox_.emplace_back(std::piecewise_construct, std::forward_as_tuple(conn),
                        std::forward_as_tuple());
    box = std::prev(inbox_.end());
  }
  box->second.push_back(Arrived{peer, std::move(link)});
  if (awaiting_conn_ == conn) timer_.cancel();
}

void Strand::cut(std::size_t txn, CutReason reason) {
  if (!in_txn_ || txn_ != txn) {
    // A step this strand has not entered yet: its worker can run the step's cut before the
    // strand's resumption from the step's release (both queued while the worker waited for a
    // CPU). Kept, so that the strand ends the step as soon as it enters it rather than running
    // a step its peer has already ended.
    if (!in_txn_ && txn >= next_txn_) {
      // After the peer's end of that step, a quiet cut is that end: the strand runs what it can.
      if (reason == CutReason::kEnded && peer_end_ && peer_end_->txn == txn) {
        reason = CutReason::kPeerEnded;
      }
      if (!early_cut_ || early_cut_->first != txn) early_cut_.emplace(txn, reason);
      early_cut_->second = std::max(early_cut_->second, reason);
    }
    return;
  }
  // After the peer's end of the step, the quiet cut (the slave's bound on what cannot be known
  // to complete: a datagram, a connection the kernel may still bring) spares a strand that is
  // reading bytes the peer wrote on a reliable protocol (TCP), which are bound to come, and one
  // not waiting at all.
  if (reason == CutReason::kEnded && cut_ == CutReason::kPeerEnded) {
    const bool bytes_owed = waiting_ == Waiting::kRead && reading_ != nullptr &&
                            reliable(reading_->link) && owed(*reading_) > 0;
    if (bytes_owed || waiting_ == Waiting::kNothing) return;
  }
  if (reason > cut_) cut_ = reason;
  cancel_waits();
}

void Strand::peer_ended(std::size_t txn, std::vector<ConnectionBytes> written) {
  const bool inside = in_txn_ && txn_ == txn;
  if (!inside && (in_txn_ || txn < next_txn_)) return;  // that step is over here already
  peer_end_ = PeerEnd{txn, std::move(written)};
  if (!inside || cut_ >= CutReason::kPeerEnded) return;
  cut_ = CutReason::kPeerEnded;
  if (waiting_ != Waiting::kNothing && !can_complete(waiting_, reading_)) {
    cancel_waits();
  } else if (waiting_ == Waiting::kRead && reading_ != nullptr) {
    // A read of a read stream may be waiting for more than the peer still sends
    // (StreamOps::certain): from now on it waits for what the peer owes.
    StreamOps::expect(*reading_, owed(*reading_));
  }
}

void Strand::recheck_peer_end() {
  if (in_txn_ && cut_ == CutReason::kPeerEnded && waiting_ == Waiting::kAccept &&
      !can_complete(Waiting::kAccept, nullptr)) {
    cancel_waits();
  }
}

void Strand::stop() {
  cut_ = CutReason::kStopped;
  cancel_waits();
}

std::string Strand::where(const OpPlan& op) const {
  const Plan& plan = worker_.plan();
  const GroupPlan& g = plan.groups[group_];
  return fmt::format("{}/{}/{} (strand {})", group_display_name(g, group_),
                     txn_display_name(g.txns[txn_], txn_), op.type, index_);
}

}  // namespace volley::engine
