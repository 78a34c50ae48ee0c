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

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "strand.hpp"
#include "worker.hpp"

namespace volley::engine {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

/// The drain reads into a buffer of its own size: a profile's largest read may be a byte.
constexpr std::size_t kDrainBufferBytes = 64 * 1024;

/// Where drained bytes of connection `conn` are counted in transaction `txn`: the first flowop
/// that reads on it (the one whose mirror wrote them), besides the transaction itself.
std::optional<std::uint32_t> reading_slot(const TxnPlan& txn, std::uint32_t conn) {
  for (const OpPlan& op : txn.ops) {
    if (op.common.connection != conn) continue;
    if (std::holds_alternative<profile::ReadOp>(op.spec) ||
        std::holds_alternative<profile::RecvFileOp>(op.spec)) {
      return op.slot;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string describe(const DrainShortfall& s, const std::vector<std::string>& group_names) {
  const ConnectionBytes& e = s.expected;
  const std::string group = e.group < group_names.size() ? group_names[e.group]
                                                         : fmt::format("{}", e.group);
  const std::string conn = e.conn == 0 ? std::string("the anonymous connection")
                                       : fmt::format("connection {}", e.conn);
  return fmt::format("group '{}' strand {} {} (#{}): read {} of the {} bytes its peer wrote ({})",
                     group, e.strand, conn, e.serial, s.got, e.bytes, s.why);
}

void Strand::begin_step() {
  for (auto& c : connections_) {
    c.step_read = 0;
    c.step_written = 0;
  }
  streams_.clear();
}

void Strand::report_step_written() {
  for (const auto& c : connections_) {
    if (c.step_written == 0) continue;
    worker_.step_written().push_back(ConnectionBytes{static_cast<std::uint32_t>(group_),
                                                     static_cast<std::uint32_t>(index_), c.id,
                                                     c.serial, c.step_written});
  }
}

std::uint32_t Strand::next_serial(std::uint32_t id) {
  for (auto& [conn, used] : opened_) {
    if (conn == id) return used++;
  }
  opened_.emplace_back(id, 1);
  return 0;
}

asio::awaitable<std::vector<DrainShortfall>> Strand::drain(std::size_t txn,
                                                           std::vector<ConnectionBytes> peer_written,
                                                           Clock::time_point deadline,
                                                           std::span<char> buffer) {
  std::vector<DrainShortfall> shortfalls;
  const GroupPlan& group = worker_.plan().groups[group_];
  asio::steady_timer limit(worker_.context());
  // Shared: a handler that already fired may run after this frame is gone.
  auto late = std::make_shared<bool>(false);
  limit.expires_at(deadline);
  limit.async_wait([this, late](const error_code& ec) {
    if (ec) return;
    *late = true;
    cancel_waits();
  });
  for (const ConnectionBytes& e : peer_written) {
    auto it = std::find_if(connections_.begin(), connections_.end(), [&](const Connection& c) {
      return c.id == e.conn && c.serial == e.serial;
    });
    // Closed here already (its bytes were read, or its loss shows in the byte counts), or a
    // connection of the peer's other host.
    if (it == connections_.end()) continue;
    Connection& c = *it;
    if (c.step_read > e.bytes) {
      shortfalls.push_back({e, c.step_read, "read more than the peer wrote"});
      continue;
    }
    const std::optional<std::uint32_t> slot =
        txn < group.txns.size() ? reading_slot(group.txns[txn], e.conn) : std::nullopt;
    std::string why;
    // Bytes a read took ahead of its flowop (see Strand::receive) are read already.
    if (const std::uint64_t n = take_stash(c, e.bytes - c.step_read); n > 0) {
      c.step_read += n;
      if (txn < group.txns.size()) {
        worker_.slot(group.txns[txn].slot).counters.bytes_read += n;
        if (slot) worker_.slot(*slot).counters.bytes_read += n;
      }
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
        expect(c, e.bytes - c.step_read);  // exactly what is still to come
        active_ = &c.link;
        auto [wait_ec] = co_await std::visit(
            [](auto& link) { return link.wait(transport::Wait::kReadable); }, c.link);
        active_ = nullptr;
        if (wait_ec && wait_ec != asio::error::operation_aborted) why = wait_ec.message();
        continue;
      }
      c.step_read += n;
      if (n > 0 && txn < group.txns.size()) {
        worker_.slot(group.txns[txn].slot).counters.bytes_read += n;
        if (slot) worker_.slot(*slot).counters.bytes_read += n;
      }
      if (ec == asio::error::eof) {
        why = "the peer closed the connection";
      } else if (ec) {
        why = ec.message();
      } else if (worker_.over_budget()) {
        co_await worker_.yield();
      }
    }
    if (c.step_read < e.bytes) shortfalls.push_back({e, c.step_read, why});
  }
  limit.cancel();
  co_return shortfalls;
}

void Worker::post_drain(std::size_t txn,
                        std::vector<std::pair<std::uint32_t, ConnectionBytes>> peer_written,
                        Clock::time_point deadline,
                        std::function<void(std::vector<DrainShortfall>)> deliver) {
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
      std::vector<DrainShortfall> shortfalls;
      std::size_t pending = 0;
      std::function<void(std::vector<DrainShortfall>)> deliver;
      std::vector<char> buffer = std::vector<char>(kDrainBufferBytes);
    };
    auto gather = std::make_shared<Gather>();
    gather->deliver = std::move(deliver);
    for (const auto& entries : per_strand) gather->pending += entries.empty() ? 0U : 1U;
    if (gather->pending == 0 || stopping_) {
      gather->deliver({});
      return;
    }
    for (std::size_t local = 0; local < per_strand.size(); ++local) {
      if (per_strand[local].empty()) continue;
      asio::co_spawn(
          context_,
          strands_[local]->drain(txn, std::move(per_strand[local]), deadline, gather->buffer),
          [gather](std::exception_ptr e, std::vector<DrainShortfall> found) {
            if (e) {
              found.push_back({{}, 0, "internal error in the drain"});
            }
            for (auto& s : found) gather->shortfalls.push_back(std::move(s));
            if (--gather->pending == 0) gather->deliver(std::move(gather->shortfalls));
          });
    }
  });
}

void Engine::drain(std::size_t txn, std::vector<ConnectionBytes> peer_written,
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
  for (const auto& entries : per_worker) gather->pending += entries.empty() ? 0U : 1U;
  if (gather->pending == 0 || stopped_) {
    asio::post(reply_on, [gather] { gather->done({}); });
    return;
  }
  for (std::size_t w = 0; w < workers_.size(); ++w) {
    if (per_worker[w].empty()) continue;
    workers_[w]->post_drain(
        txn, std::move(per_worker[w]), deadline,
        [&reply_on, gather, alive = alive_](std::vector<DrainShortfall> part) {
          asio::post(reply_on, [gather, alive, part = std::move(part)]() mutable {
            if (!*alive) return;
            for (auto& s : part) gather->shortfalls.push_back(std::move(s));
            if (--gather->pending == 0) gather->done(std::move(gather->shortfalls));
          });
        });
  }
}

}  // namespace volley::engine
