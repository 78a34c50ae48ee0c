// The end-of-step drain. A step's cut stops each side at its own moment: the master at its
// deadline (plus a grace for what is in flight), the slave when the master's end_step and a quiet
// spell say so. Whatever one side wrote before it stopped and the other had not read yet would
// stay in the socket buffers: unread, so the two sides' byte counts disagree, and read by the next
// step's operations as if it were theirs, so the next step's streams are out of step (a reader
// then waits for bytes that never come). So each side reports what it wrote per connection during
// the step (Strand::report_step_written), the other reads exactly that much more (Strand::drain),
// and only then does the next step start. Drained bytes are the step's bytes read: they were sent
// in it.
#include <algorithm>
#include <memory>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "strand.hpp"
#include "worker.hpp"
#include "volley/profile/flowop_traits.hpp"

namespace volley::engine {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

/// The drain reads into a buffer of its own size: a profile's largest read may be a byte.
constexpr std::size_t kDrainBufferBytes = std::size_t{64} * 1024;

/// Where drained bytes of connection `conn` are counted in transaction `txn`: the first flowop
/// that reads on it (the one whose mirror wrote them), besides the transaction itself.
std::optional<std::uint32_t> reading_slot(const TxnPlan& txn, std::uint32_t conn) {
  for (const OpPlan& op : txn.ops) {
    if (op.common.connection != conn) continue;
    if (profile::traits(op.spec).data == profile::Data::kReceives) return op.slot;
  }
  return std::nullopt;
}

}  // namespace

void Strand::begin_step() {
  for (auto& c : connections_) {
    c.step_read = 0;
    c.step_written = 0;
  }
  closed_.clear();
  streams_.clear();
  for (Opened& o : opened_) o.at_step_start = o.used;
}

void Strand::report_step_written() {
  for (const auto& c : connections_) {
    if (c.step_written == 0) continue;
    worker_.step_written().push_back(ConnectionBytes{static_cast<std::uint32_t>(group_),
                                                     static_cast<std::uint32_t>(index_), c.id,
                                                     c.serial, c.step_written, c.peer});
  }
  for (const Closed& c : closed_) {
    if (c.written == 0) continue;
    worker_.step_written().push_back(
        ConnectionBytes{static_cast<std::uint32_t>(group_), static_cast<std::uint32_t>(index_),
                        c.id, ConnectionBytes::kClosedSerial, c.written, c.peer});
  }
  for (const Opened& o : opened_) {
    if (o.used == o.at_step_start) continue;
    worker_.step_written().push_back(
        ConnectionBytes{static_cast<std::uint32_t>(group_), static_cast<std::uint32_t>(index_),
                        o.id, ConnectionBytes::kOpenedSerial, o.used, o.peer});
  }
}

void StrandCore::note_closed(const Connection& c) {
  if (c.step_written == 0 && c.step_read == 0 && c.stash == 0) return;
  auto it = std::find_if(closed_.begin(), closed_.end(), [&](const Closed& entry) {
    return entry.id == c.id && entry.peer == c.peer;
  });
  if (it == closed_.end()) it = closed_.insert(closed_.end(), Closed{c.id, c.peer, 0, 0});
  it->written += c.step_written;
  it->read += c.step_read + c.stash;
}

bool StrandCore::listed(const Connection& c, const std::vector<ConnectionBytes>& peer) {
  return std::any_of(peer.begin(), peer.end(), [&](const ConnectionBytes& e) {
    return e.conn == c.id && e.serial == c.serial && e.peer == c.peer;
  });
}

std::uint64_t StrandCore::owed_unlisted(std::uint32_t id, std::uint32_t from,
                                        const std::vector<ConnectionBytes>& peer) const {
  std::uint64_t wrote = 0;
  for (const ConnectionBytes& e : peer) {
    if (e.conn == id && e.peer == from && e.serial == ConnectionBytes::kClosedSerial) {
      wrote += e.bytes;
    }
  }
  if (wrote == 0) return 0;
  std::uint64_t have = 0;
  for (const Closed& c : closed_) {
    if (c.id == id && c.peer == from) have += c.read;
  }
  for (const Connection& c : connections_) {
    if (c.id == id && c.peer == from && !listed(c, peer)) have += c.step_read + c.stash;
  }
  return wrote > have ? wrote - have : 0;
}

std::uint32_t StrandCore::next_serial(std::uint32_t id, std::uint32_t peer) {
  for (Opened& o : opened_) {
    if (o.id == id && o.peer == peer) return o.used++;
  }
  opened_.push_back(Opened{id, peer, 1, 0});
  return 0;
}

void Strand::adopt_inbox(std::uint32_t id) {
  auto box = std::find_if(inbox_.begin(), inbox_.end(),
                          [id](const auto& entry) { return entry.first == id; });
  if (box == inbox_.end()) return;
  for (Arrived& arrived : box->second) {
    prepare_arrival(arrived.link, nullptr);
    connections_.push_back(
        Connection{id, std::move(arrived.link), next_serial(id, arrived.peer), arrived.peer});
  }
  inbox_.erase(box);
}

void Strand::adopt_inbox() {
  while (!inbox_.empty()) adopt_inbox(inbox_.front().first);
  inbox_.shrink_to_fit();
}

bool Strand::uses(std::size_t txn, std::uint32_t id) const {
  const auto& txns = worker_.plan().groups[group_].txns;
  if (txn >= txns.size()) return false;
  return std::any_of(txns[txn].ops.begin(), txns[txn].ops.end(), [id](const OpPlan& op) {
    // think and nop are on no connection (their id is 0 all the same).
    return op.common.connection == id &&
           profile::traits(op.spec).connection != profile::OnConnection::kNone;
  });
}

std::uint32_t Strand::serials_used(std::uint32_t id, std::uint32_t peer) const {
  for (const Opened& o : opened_) {
    if (o.id == id && o.peer == peer) return o.used;
  }
  return 0;
}

asio::awaitable<void> Strand::tick(std::uint32_t id) {
  // A millisecond, or less when a connection of `id` is delivered meanwhile.
  awaiting_conn_ = id;
  timer_.expires_after(std::chrono::milliseconds(1));
  co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
  awaiting_conn_.reset();
}

void Strand::count_drained(std::size_t txn, std::uint32_t conn, std::uint64_t n) {
  const GroupPlan& group = worker_.plan().groups[group_];
  if (n == 0 || txn >= group.txns.size()) return;
  worker_.slot(group.txns[txn].slot).counters.bytes_read += n;
  if (const auto slot = reading_slot(group.txns[txn], conn))
    worker_.slot(*slot).counters.bytes_read += n;
  count_own_bytes(n);
}

bool Strand::level_already(std::size_t txn, const std::vector<ConnectionBytes>& peer_written,
                           std::uint64_t& read_exactly) {
  const auto listed_one = [this](const ConnectionBytes& e) {
    return std::find_if(connections_.begin(), connections_.end(), [&](const Connection& c) {
      return c.id == e.conn && c.serial == e.serial && c.peer == e.peer;
    });
  };
  std::uint64_t level = 0;
  for (const ConnectionBytes& e : peer_written) {
    if (!uses(txn, e.conn)) continue;
    if (e.serial == ConnectionBytes::kClosedSerial) return false;
    if (e.serial == ConnectionBytes::kOpenedSerial) {
      // Every connection the peer opened under the id is here already (await_opened waits
      // for none); one still on its way: drain() waits for it.
      if (serials_used(e.conn, e.peer) < e.bytes) return false;
      continue;
    }
    const auto it = listed_one(e);
    // Not open here, more read than written, or bytes still to read: drain() decides.
    if (it == connections_.end() || it->step_read > e.bytes || it->step_read + it->stash < e.bytes)
      return false;
    ++level;
  }
  // What reads took ahead of their flowops is the step's, as drain() counts it.
  for (const ConnectionBytes& e : peer_written) {
    if (!uses(txn, e.conn) || e.serial == ConnectionBytes::kOpenedSerial) continue;
    Connection& c = *listed_one(e);
    if (const std::uint64_t n = take_stash(c, e.bytes - c.step_read); n > 0) {
      c.step_read += n;
      count_drained(txn, e.conn, n);
    }
  }
  read_exactly += level;
  return true;
}

asio::awaitable<DrainOutcome> Strand::drain(std::size_t txn,
                                            std::vector<ConnectionBytes> peer_written,
                                            Clock::time_point deadline, std::span<char> buffer) {
  std::vector<DrainShortfall> shortfalls;
  std::uint64_t read_exactly = 0;
  asio::steady_timer limit(worker_.context());
  // Shared: a handler that already fired may run after this frame is gone. `over` keeps such a
  // handler from cancelling a wait of whatever the strand does after the drain (cancel() cannot
  // take back a completion already queued).
  auto late = std::make_shared<bool>(false);
  auto over = std::make_shared<bool>(false);
  limit.expires_at(deadline);
  limit.async_wait([this, late, over](const error_code& ec) {
    if (ec || *over) return;
    *late = true;
    cancel_waits();
  });
  // A master tells every slave what it wrote on all its connections: those of another host's
  // are not this side's to read (a connection id may serve one host in one step and another in
  // the next).
  std::erase_if(peer_written, [this, txn](const ConnectionBytes& e) { return !uses(txn, e.conn); });
  // Connections the peer made that this strand never accepted are this step's too: all of them,
  // those still on their way included, before any is read.
  for (const ConnectionBytes& e : peer_written) adopt_inbox(e.conn);
  for (const ConnectionBytes& e : peer_written) {
    if (e.serial != ConnectionBytes::kOpenedSerial) continue;
    if (auto s = co_await await_opened(txn, e, peer_written, buffer, late)) {
      shortfalls.push_back(std::move(*s));
    }
  }
  for (const ConnectionBytes& e : peer_written) {
    // Below, once the listed are read; and the counts of opened ones, awaited above.
    if (e.serial == ConnectionBytes::kClosedSerial || e.serial == ConnectionBytes::kOpenedSerial) {
      continue;
    }
    const auto find_it = [&] {
      return std::find_if(connections_.begin(), connections_.end(), [&](const Connection& c) {
        return c.id == e.conn && c.serial == e.serial && c.peer == e.peer;
      });
    };
    auto it = find_it();
    // One the peer made that has not reached this strand yet (on its way through the
    // listener): awaited as the drain awaits bytes.
    while (it == connections_.end() && e.serial >= serials_used(e.conn, e.peer) && !*late &&
           cut_ != CutReason::kStopped) {
      co_await tick(e.conn);
      adopt_inbox(e.conn);
      it = find_it();
    }
    // Closed here already (its bytes were read, or its loss shows in the byte counts).
    if (it == connections_.end()) continue;
    Connection& c = *it;
    if (c.step_read > e.bytes) {
      shortfalls.push_back({e, c.step_read, "read more than the peer wrote"});
      continue;
    }
    std::string why;
    // Bytes a read took ahead of its flowop (see StreamOps::read) are read already.
    if (const std::uint64_t n = take_stash(c, e.bytes - c.step_read); n > 0) {
      c.step_read += n;
      count_drained(txn, e.conn, n);
    }
    while (c.step_read < e.bytes && why.empty()) {
      if (*late || cut_ == CutReason::kStopped) {
        why = *late ? "the rest did not arrive within the step grace" : "the run stopped";
        break;
      }
      const auto want = std::min<std::uint64_t>(e.bytes - c.step_read, buffer.size());
      const std::span<char> into(buffer.data(), static_cast<std::size_t>(want));
      const transport::IoResult io =
          std::visit([into](auto& link) { return link.try_read(into); }, c.link);
      const error_code& ec = io.ec;
      const std::size_t n = io.bytes;
      if (io.would_block()) {
        StreamOps::expect(c, e.bytes - c.step_read);  // exactly what is still to come
        active_ = &c.link;
        auto [wait_ec] = co_await std::visit(
            [](auto& link) { return link.wait(transport::Wait::kReadable); }, c.link);
        active_ = nullptr;
        if (wait_ec && wait_ec != asio::error::operation_aborted) why = wait_ec.message();
        continue;
      }
      c.step_read += n;
      count_drained(txn, e.conn, n);
      if (ec == asio::error::eof) {
        why = "the peer closed the connection";
      } else if (ec) {
        why = ec.message();
      } else if (worker_.over_budget()) {
        co_await worker_.yield();
      }
    }
    if (c.step_read < e.bytes) {
      shortfalls.push_back({e, c.step_read, why});
    } else {
      ++read_exactly;
    }
  }
  for (const ConnectionBytes& e : peer_written) {
    if (e.serial != ConnectionBytes::kClosedSerial) continue;
    if (auto s = co_await drain_closed(txn, e, peer_written, buffer, late)) {
      shortfalls.push_back(std::move(*s));
    }
  }
  *over = true;
  limit.cancel();
  co_return DrainOutcome{std::move(shortfalls), read_exactly};
}

asio::awaitable<std::optional<DrainShortfall>> Strand::await_opened(
    std::size_t txn, const ConnectionBytes& e, const std::vector<ConnectionBytes>& peer,
    std::span<char> buffer, const std::shared_ptr<bool>& late) {
  while (serials_used(e.conn, e.peer) < e.bytes) {
    if (*late || cut_ == CutReason::kStopped) {
      co_return DrainShortfall{
          e, serials_used(e.conn, e.peer),
          *late ? "the rest did not arrive within the step grace" : "the run stopped"};
    }
    // A storm can leave thousands on their way: those the peer has closed are read to their end
    // and closed as they come, so that they do not hold a descriptor each while the rest arrive.
    if (!finish_unlisted(txn, e.conn, e.peer, peer, buffer)) co_await tick(e.conn);
    adopt_inbox(e.conn);
  }
  co_return std::nullopt;
}

bool Strand::finish_unlisted(std::size_t txn, std::uint32_t id, std::uint32_t from,
                             const std::vector<ConnectionBytes>& peer, std::span<char> buffer) {
  bool moved = false;
  for (std::size_t i = 0; i < connections_.size();) {
    Connection& c = connections_[i];
    if (c.id != id || c.peer != from || listed(c, peer)) {
      ++i;
      continue;
    }
    if (const std::uint64_t n = take_stash(c, c.stash); n > 0) {
      c.step_read += n;
      count_drained(txn, id, n);
    }
    bool ended = false;
    for (;;) {
      const transport::IoResult io =
          std::visit([&](auto& link) { return link.try_read(buffer); }, c.link);
      c.step_read += io.bytes;
      count_drained(txn, id, io.bytes);
      moved = moved || io.bytes > 0;
      if (io.would_block()) break;
      if (io.ec) {  // the end of the stream (the peer closed it), or an error
        ended = true;
        break;
      }
    }
    if (!ended) {
      ++i;
      continue;
    }
    note_closed(c);
    closing(*this, c.link);
    std::visit([](auto& link) { link.close(); }, c.link);
    connections_.erase(connections_.begin() + static_cast<std::ptrdiff_t>(i));
    moved = true;
  }
  return moved;
}

asio::awaitable<std::optional<DrainShortfall>> Strand::drain_closed(
    std::size_t txn, const ConnectionBytes& e, const std::vector<ConnectionBytes>& peer,
    std::span<char> buffer, const std::shared_ptr<bool>& late) {
  // Which of the candidates holds the bytes is not known (the peer counts them only as a sum),
  // and one may hold none and stay open: so each is read without waiting, in turn, and a round
  // that found nothing waits a tick (for data in flight, or a connection still on its way).
  for (;;) {
    adopt_inbox(e.conn);
    std::uint64_t left = owed_unlisted(e.conn, e.peer, peer);
    if (left == 0) co_return std::nullopt;
    bool moved = false;
    for (std::size_t i = 0; i < connections_.size() && left > 0;) {
      Connection& c = connections_[i];
      if (c.id != e.conn || c.peer != e.peer || listed(c, peer)) {
        ++i;
        continue;
      }
      if (const std::uint64_t n = take_stash(c, c.stash); n > 0) {  // counted in owed already
        c.step_read += n;
        count_drained(txn, e.conn, n);
      }
      bool ended = false;
      while (left > 0) {
        const auto want = std::min<std::uint64_t>(left, buffer.size());
        const transport::IoResult io = std::visit(
            [&](auto& link) { return link.try_read(buffer.first(static_cast<std::size_t>(want))); },
            c.link);
        c.step_read += io.bytes;
        count_drained(txn, e.conn, io.bytes);
        left -= std::min<std::uint64_t>(left, io.bytes);
        moved = moved || io.bytes > 0;
        if (io.would_block()) break;
        if (io.ec) {  // the end of the stream (the peer closed it), or an error: nothing more
          ended = true;
          break;
        }
      }
      if (!ended) {
        ++i;
        continue;
      }
      // Closed by the peer and read to its end: closed here too.
      note_closed(c);
      closing(*this, c.link);
      std::visit([](auto& link) { link.close(); }, c.link);
      connections_.erase(connections_.begin() + static_cast<std::ptrdiff_t>(i));
      moved = true;
    }
    if (left == 0) co_return std::nullopt;
    if (*late || cut_ == CutReason::kStopped) {
      co_return DrainShortfall{
          e, e.bytes - left,
          *late ? "the rest did not arrive within the step grace" : "the run stopped"};
    }
    if (!moved) {
      co_await tick(e.conn);
    } else if (worker_.over_budget()) {
      co_await worker_.yield();
    }
  }
}

void Worker::post_drain(std::size_t txn,
                        std::vector<std::pair<std::uint32_t, ConnectionBytes>> peer_written,
                        Clock::time_point deadline, std::function<void(DrainOutcome)> deliver) {
  if (!thread_.joinable()) {
    deliver({});
    return;
  }
  asio::post(context_, [this, txn, peer_written = std::move(peer_written), deadline,
                        deliver = std::move(deliver)]() mutable {
    // One coroutine per strand, so one slow connection does not hold the others up.
    std::vector<std::vector<ConnectionBytes>> per_strand(strands_.size());
    for (auto& [local, e] : peer_written) {
      if (local < per_strand.size()) per_strand[local].push_back(e);
    }
    struct Gather {
      DrainOutcome outcome;
      std::size_t pending = 0;
      std::function<void(DrainOutcome)> deliver;
      std::vector<char> buffer;
    };
    // Every connection the peer made in the step is this step's: one a strand never accepted
    // (its accept ended with the step) joins its pool now, numbered as the peer numbered it, so
    // that both sides' pools stay alike and the next step's accepts take the next step's.
    for (auto& strand : strands_) strand->adopt_inbox();
    auto gather = std::make_shared<Gather>();
    gather->deliver = std::move(deliver);
    if (stopping_) {
      gather->deliver({});
      return;
    }
    // A strand with everything read already needs no coroutine (and its frames, a few hundred
    // bytes per connection at 200,000 connections).
    for (std::size_t local = 0; local < per_strand.size(); ++local) {
      if (per_strand[local].empty()) continue;
      if (strands_[local]->level_already(txn, per_strand[local], gather->outcome.read_exactly)) {
        per_strand[local] = {};
      } else {
        ++gather->pending;
      }
    }
    if (gather->pending == 0) {
      gather->deliver(std::move(gather->outcome));
      return;
    }
    gather->buffer.resize(kDrainBufferBytes);
    for (std::size_t local = 0; local < per_strand.size(); ++local) {
      if (per_strand[local].empty()) continue;
      asio::co_spawn(
          context_,
          strands_[local]->drain(txn, std::move(per_strand[local]), deadline, gather->buffer),
          [gather](const std::exception_ptr& e, DrainOutcome found) {
            if (e) {
              found.shortfalls.push_back({{}, 0, "internal error in the drain"});
            }
            for (auto& s : found.shortfalls) gather->outcome.shortfalls.push_back(std::move(s));
            gather->outcome.read_exactly += found.read_exactly;
            if (--gather->pending == 0) gather->deliver(std::move(gather->outcome));
          });
    }
  });
}

void Engine::drain(std::size_t txn, const std::vector<ConnectionBytes>& peer_written,
                   std::chrono::steady_clock::time_point deadline, asio::io_context& reply_on,
                   std::function<void(std::vector<DrainShortfall>)> done) {
  std::vector<std::vector<std::pair<std::uint32_t, ConnectionBytes>>> per_worker(workers_.size());
  for (const ConnectionBytes& e : peer_written) {
    // A strand this side does not run (another host's share): not this side's to read.
    if (e.group >= placement_.size() || e.strand >= placement_[e.group].size()) continue;
    const auto [worker, local] = placement_[e.group][e.strand];
    per_worker[worker].emplace_back(local, e);
  }
  struct Gather {
    std::vector<DrainShortfall> shortfalls;
    std::size_t pending = 0;
    std::function<void(std::vector<DrainShortfall>)> done;
  };
  auto gather = std::make_shared<Gather>();
  gather->done = std::move(done);
  // Every worker with strands, listed or not: each adopts the connections its strands never
  // accepted (Worker::post_drain).
  for (const auto& w : workers_) gather->pending += w->strand_count() > 0 ? 1U : 0U;
  if (gather->pending == 0 || stopped_) {
    asio::post(reply_on, [gather] { gather->done({}); });
    return;
  }
  for (std::size_t w = 0; w < workers_.size(); ++w) {
    if (workers_[w]->strand_count() == 0) continue;
    workers_[w]->post_drain(
        txn, std::move(per_worker[w]), deadline,
        [this, txn, &reply_on, gather, alive = alive_](DrainOutcome part) {
          asio::post(reply_on, [this, txn, gather, alive, part = std::move(part)]() mutable {
            if (!*alive) return;
            for (auto& s : part.shortfalls) gather->shortfalls.push_back(std::move(s));
            if (txn < read_exactly_.size()) read_exactly_[txn] += part.read_exactly;
            if (--gather->pending == 0) gather->done(std::move(gather->shortfalls));
          });
        });
  }
}

}  // namespace volley::engine
